/**
 * Activities of agent test runs (docs/agent-tests.md): the test call's record, driving the call
 * workflow through its own updates (with the worker's Temporal client: a workflow cannot send
 * updates), the simulated caller's lines, and the evaluation of each attempt.
 */
import { activeTraceId } from '../src/observability/tracing/spans';
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { ActivityDeps } from '.';
import { plainAll } from '../src/db/database';
import { callFacts } from '../src/agent-tests/call-facts';
import { evaluateExpectations } from '../src/agent-tests/expectations';
import { judgeMessages, parseVerdicts, type Verdict } from '../src/agent-tests/judge';
import { replayDiff } from '../src/agent-tests/replay';
import { callerLine, callerMessages, type CallerTurnRequest } from '../src/agent-tests/simulated-caller';
import { transcriptOf } from '../src/api/serializers/call';
import { streamChat } from '../src/providers/llm/chat';
import { llmClients, llmFailure } from '../src/providers/llm/llm-activity-support';
import {
  callWorkflowId,
  endCallUpdate,
  greetingUpdate,
  sendTextUpdate,
  type AgentSnapshot,
  type CallStatus,
  type LlmMessage,
  type LlmToolSpec,
} from '../workflows/call-definitions';
import type { CallSummary } from '../workflows/call-context';
import { heartbeating } from './heartbeating';
import type { AttemptKey, AttemptOutcome, EndedBy, LlmUsage, SimulatorLlm, TestCaseSpec } from '../workflows/test-definitions';

const NO_USAGE: LlmUsage = { prompt_tokens: 0, completion_tokens: 0 };
/** The call has ended (or never ran): an update to it is refused. */
const callGone = (err: unknown) => err instanceof WorkflowUpdateFailedError || err instanceof WorkflowNotFoundError;

export function createAgentTestActivities({ db, config }: ActivityDeps) {
  const clientFor = llmClients(config);
  const callHandle = (callId: string) => Context.current().client.workflow.getHandle(callWorkflowId(callId));

  async function chat(llm: SimulatorLlm, messages: LlmMessage[], tools: LlmToolSpec[], temperature?: number) {
    try {
      return await heartbeating(streamChat(clientFor(llm.provider), { provider: llm.provider, model: llm.model, messages, tools, temperature }));
    } catch (err) {
      throw llmFailure(err);
    }
  }

  async function saveAttempt(key: AttemptKey, values: { call_id: string | null; status: 'running' | 'done' | 'error'; passed: boolean | null; result: Record<string, unknown> }) {
    await db.models.AgentTestAttempt.upsert({ run_id: key.runId, test_id: key.testId, version: key.version, attempt: key.attempt, ...values });
  }

  return {
    /** The test call's record (marked with its run) and the attempt's `running` row; idempotent. */
    async prepareTestCall(req: AttemptKey & { callId: string; agent: AgentSnapshot; customParameters: Record<string, string | number>; direction: 'inbound' | 'outbound'; phoneNumber: string }): Promise<void> {
      await db.models.Call.findOrCreate({
        where: { id: req.callId },
        defaults: {
          id: req.callId,
          agent_id: req.agent.id,
          agent_name: req.agent.name,
          agent_version: req.agent.version,
          phone_number: req.phoneNumber,
          direction: req.direction,
          status: 'in_progress',
          workflow_id: callWorkflowId(req.callId),
          start_time: new Date(),
          metadata: { test_run_id: req.runId, test_id: req.testId, test_attempt: req.attempt },
          channel: 'text',
          context: req.customParameters,
          // The test call is a child workflow in its run's trace (docs/tracing.md).
          trace_id: activeTraceId(),
        },
      });
      await saveAttempt(req, { call_id: req.callId, status: 'running', passed: null, result: {} });
    },

    async testCallGreeting({ callId }: { callId: string }): Promise<string | null> {
      try {
        return await heartbeating(callHandle(callId).executeUpdate(greetingUpdate, { updateId: 'test-greeting' }));
      } catch (err) {
        if (callGone(err)) return null;
        throw err;
      }
    },

    /** One caller line; the update id makes a retried activity attach to the same turn. */
    async testCallTurn({ callId, text, turn }: { callId: string; text: string; turn: number }): Promise<{ accepted: boolean; replies: string[]; status: CallStatus }> {
      try {
        const result = await heartbeating(callHandle(callId).executeUpdate(sendTextUpdate, { args: [{ text }], updateId: `test-turn-${turn}` }));
        return { accepted: true, replies: result.replies, status: result.status };
      } catch (err) {
        if (callGone(err)) return { accepted: false, replies: [], status: 'completed' };
        throw err;
      }
    },

    /** The caller hangs up (the test is over); a call that already ended is left as it is. */
    async endTestCall({ callId }: { callId: string }): Promise<void> {
      try {
        await callHandle(callId).executeUpdate(endCallUpdate, { args: [{ reason: 'user_ended' }], updateId: 'test-end' });
      } catch (err) {
        if (!callGone(err)) throw err;
      }
    },

    async simulateCaller(req: CallerTurnRequest & { agent: SimulatorLlm; simulator: SimulatorLlm | null }): Promise<{ text: string | null; usage: LlmUsage }> {
      const { messages, tools } = callerMessages(req);
      const result = await chat(req.simulator ?? req.agent, messages, tools);
      return { text: callerLine(result), usage: result.usage };
    },

    async evaluateTestAttempt(req: AttemptKey & {
      callId: string;
      test: TestCaseSpec;
      turnsSent: number;
      callSummary: CallSummary;
      endedBy: EndedBy;
      simulatorUsage: LlmUsage;
      simulator: SimulatorLlm | null;
      agentLlm: SimulatorLlm;
    }): Promise<AttemptOutcome> {
      const { test, callSummary } = req;
      const events = plainAll(await db.models.CallEvent.findAll({ where: { call_id: req.callId }, order: [['seq', 'ASC']] }));
      const facts = callFacts(events);
      const transcript = transcriptOf(events).map(({ role, text }) => ({ role, text }));
      const expectations = evaluateExpectations(test.expectations, {
        facts,
        endReason: callSummary.end_reason,
        endedBy: req.endedBy,
        turnsSent: req.turnsSent,
        recording: test.recording,
      });
      let verdicts: Verdict[] = [];
      let judgeUsage = NO_USAGE;
      if (test.judge.length) {
        const { messages, tools } = judgeMessages(test.judge, transcript, facts.toolCalls);
        // The same conversation should get the same verdict.
        const result = await chat(req.simulator ?? req.agentLlm, messages, tools, 0);
        verdicts = parseVerdicts(test.judge, result);
        judgeUsage = result.usage;
      }
      const failure = callSummary.status === 'failed' ? (events.filter((e) => e.event_type === 'error').pop()?.data.message as string | undefined) ?? 'the call failed' : null;
      const passed = failure === null && expectations.every((e) => e.passed) && verdicts.every((v) => v.passed);
      await saveAttempt(req, {
        call_id: req.callId,
        status: 'done',
        passed,
        result: {
          call_status: callSummary.status,
          end_reason: callSummary.end_reason,
          ended_by: req.endedBy,
          turns: req.turnsSent,
          error: failure,
          expectations,
          judge: verdicts,
          transcript,
          tool_calls: facts.toolCalls,
          nodes: facts.nodes,
          unmocked_tools: facts.unmockedTools,
          diff: test.recording ? replayDiff(test.recording, facts) : null,
          usage: {
            agent: { prompt_tokens: callSummary.totals.llm_prompt_tokens, completion_tokens: callSummary.totals.llm_completion_tokens },
            simulator: req.simulatorUsage,
            judge: judgeUsage,
          },
        },
      });
      return { passed, error: failure };
    },

    async recordAttemptError(req: AttemptKey & { callId: string | null; message: string }): Promise<AttemptOutcome> {
      await saveAttempt(req, { call_id: req.callId, status: 'error', passed: false, result: { error: req.message } });
      return { passed: false, error: req.message };
    },

    async finishTestRun({ runId, status }: { runId: string; status: 'completed' | 'canceled' }): Promise<void> {
      await db.models.AgentTestRun.update({ status, finished_at: new Date() }, { where: { id: runId, status: 'running' } });
    },
  };
}
