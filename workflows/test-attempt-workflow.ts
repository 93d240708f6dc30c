/**
 * One attempt of one agent test (docs/agent-tests.md): a real text call of the agent version under
 * test, started as a child workflow and driven turn by turn with the call's own `sendText` update
 * (through activities: a workflow cannot send updates). The caller's lines come from the script,
 * the recorded call, or an LLM playing the persona. Then the attempt is evaluated and stored.
 * Workflow code: deterministic, no I/O.
 */
import { CancellationScope, ChildWorkflowCancellationType, isCancellation, proxyActivities, startChild, uuid4, type ChildWorkflowHandle } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { AgentName, CallStatus, Direction, PhoneNumber } from '../src/shared/search-attributes';
import { callWorkflowId, type CallWorkflowInput } from './call-definitions';
import type { CallSummary } from './call-context';
import { toolResultsFor, turnLimit, type AttemptKey, type EndedBy, type AttemptOutcome, type LlmUsage, type TestAttemptInput } from './test-definitions';

/** The number test calls show (fictional, NANP 555-01xx). */
export const TEST_CALL_PHONE_NUMBER = '+15555550100';

const short = proxyActivities<Activities>({ startToCloseTimeout: '1m', retry: { initialInterval: '1s', maximumAttempts: 10 } });
// A turn lasts as long as the agent's LLM rounds and mocked tools; the update id makes a retry
// after a worker crash attach to the same turn instead of sending the line twice.
const turns = proxyActivities<Activities>({ startToCloseTimeout: '5m', heartbeatTimeout: '5s', retry: { initialInterval: '1s', maximumAttempts: 10 } });
const llm = proxyActivities<Activities>({ startToCloseTimeout: '2m', heartbeatTimeout: '5s', retry: { initialInterval: '1s', maximumAttempts: 4 } });

export async function testAttemptWorkflow(input: TestAttemptInput): Promise<AttemptOutcome> {
  const { test, agent, runId, attempt } = input;
  const key: AttemptKey = { runId, testId: test.id, version: agent.version, attempt };
  const callId = uuid4();
  const direction = test.recording?.direction ?? 'inbound';
  const simulatorUsage: LlmUsage = { prompt_tokens: 0, completion_tokens: 0 };
  let call: ChildWorkflowHandle<(input: CallWorkflowInput) => Promise<CallSummary>> | null = null;
  try {
    await short.prepareTestCall({ ...key, callId, agent, customParameters: test.custom_parameters, direction, phoneNumber: TEST_CALL_PHONE_NUMBER });
    const callInput: CallWorkflowInput = {
      callId,
      // Test calls notify nobody: the agent's webhook is left out of the snapshot.
      agent: { ...agent, webhook_url: null, webhook_events: [] },
      phoneNumber: TEST_CALL_PHONE_NUMBER,
      direction,
      channel: 'text',
      customParameters: test.custom_parameters,
      initialStatus: 'in_progress',
      options: input.options,
      test: { toolResults: toolResultsFor(test), unmocked: 'error' },
    };
    call = await startChild<(input: CallWorkflowInput) => Promise<CallSummary>>('callWorkflow', {
      workflowId: callWorkflowId(callId),
      // A canceled run hangs its calls up (below) rather than leaving their records open.
      cancellationType: ChildWorkflowCancellationType.ABANDON,
      args: [callInput],
      typedSearchAttributes: [
        { key: AgentName, value: agent.name },
        { key: CallStatus, value: 'in_progress' },
        { key: Direction, value: direction },
        { key: PhoneNumber, value: TEST_CALL_PHONE_NUMBER },
      ],
      staticSummary: `test ${test.name} · attempt ${attempt} · agent ${agent.name} v${agent.version}`,
    });
    const transcript: Array<{ role: 'user' | 'assistant'; text: string }> = [];
    const greeting = await turns.testCallGreeting({ callId });
    if (greeting) transcript.push({ role: 'assistant', text: greeting });

    const limit = turnLimit(test);
    const replayed = (test.recording?.turns ?? []).flatMap((t) => (t.caller === null ? [] : [t.caller]));
    let sent = 0;
    let endedBy: EndedBy = 'limit';
    while (sent < limit) {
      let line: string | null;
      if (test.kind === 'scripted') line = test.script[sent] ?? null;
      else if (test.kind === 'replay') line = replayed[sent] ?? null;
      else {
        const next = await llm.simulateCaller({ persona: test.persona ?? '', transcript, agent: { provider: agent.llm_provider, model: agent.llm_model }, simulator: input.simulator, customParameters: test.custom_parameters });
        simulatorUsage.prompt_tokens += next.usage.prompt_tokens;
        simulatorUsage.completion_tokens += next.usage.completion_tokens;
        line = next.text;
      }
      if (line === null) {
        endedBy = 'caller';
        break;
      }
      const turn = await turns.testCallTurn({ callId, text: line, turn: sent + 1 });
      if (turn.accepted) {
        sent++;
        transcript.push({ role: 'user', text: line });
        for (const reply of turn.replies) transcript.push({ role: 'assistant', text: reply });
      }
      if (!turn.accepted || turn.status !== 'in_progress') {
        endedBy = 'agent';
        break;
      }
    }
    if (endedBy !== 'agent') await short.endTestCall({ callId });
    const summary: CallSummary = await call.result();
    return await llm.evaluateTestAttempt({ ...key, callId, test, turnsSent: sent, callSummary: summary, endedBy, simulatorUsage, simulator: input.simulator, agentLlm: { provider: agent.llm_provider, model: agent.llm_model } });
  } catch (err) {
    if (isCancellation(err)) {
      const open = call;
      await CancellationScope.nonCancellable(async () => {
        if (open) {
          await short.endTestCall({ callId });
          await open.result().catch(() => undefined);
        }
        await short.recordAttemptError({ ...key, callId: open ? callId : null, message: 'the run was canceled' });
      });
      throw err;
    }
    const message = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
    return await short.recordAttemptError({ ...key, callId, message });
  }
}
