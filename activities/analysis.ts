/**
 * Post-call analysis activities. `analyzeCall` reads the finished call from PostgreSQL (every
 * event is written before the analysis starts), asks the LLM for the agent's answer shape and
 * checks the answer. LLM errors are thrown (the workflow's retry policy backs off); an answer
 * that fails the check is returned as `rejected`, and the workflow decides whether to ask again.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ActivityDeps } from '.';
import { plain, plainAll } from '../src/db/database';
import { checkAnswer, answerJsonSchema } from '../src/analysis/answer-schema';
import { analysisMessages, type AnalysedCall } from '../src/analysis/prompt';
import type { AnalysisAnswer, AnalysisPlan } from '../src/analysis/types';
import { transcriptOf } from '../src/api/serializers/call';
import { countProviderError } from '../src/observability/metrics';
import { llmClients, llmFailure } from '../src/providers/llm/llm-activity-support';
import { llmVendor } from '../src/providers/llm/registry';
import { structuredCompletion } from '../src/providers/llm/structured';
import { heartbeating } from './heartbeating';

export interface AnalyzeCallRequest {
  callId: string;
  plan: AnalysisPlan;
  /** Why the previous answer was refused: told to the model so it can correct it. */
  rejected?: string;
}

type Usage = { prompt_tokens: number; completion_tokens: number };

export type AnalyzeCallResult =
  | { kind: 'skipped'; reason: string }
  | { kind: 'answer'; answer: AnalysisAnswer; usage: Usage }
  | { kind: 'rejected'; problem: string; usage: Usage };

export function createAnalysisActivities({ db, config }: ActivityDeps) {
  const clientFor = llmClients(config);

  async function loadCall(callId: string): Promise<AnalysedCall> {
    const call = plain(await db.models.Call.findByPk(callId));
    if (!call) throw ApplicationFailure.nonRetryable(`call ${callId} does not exist`, 'CallNotFound');
    const speech = plainAll(
      await db.models.CallEvent.findAll({ where: { call_id: callId, event_type: ['user_spoke', 'agent_spoke'] }, order: [['seq', 'ASC']] }),
    );
    return {
      transcript: transcriptOf(speech),
      date: new Date(call.start_time ?? call.created_at).toISOString().slice(0, 10),
      direction: call.direction,
      status: call.status,
      endReason: call.end_reason,
      durationSecs: call.duration,
      context: call.context ?? {},
      transferSummary: call.transfer_summary ?? null,
    };
  }

  return {
    async analyzeCall({ callId, plan, rejected }: AnalyzeCallRequest): Promise<AnalyzeCallResult> {
      const call = await loadCall(callId);
      if (!call.transcript.some((t) => t.role === 'user')) return { kind: 'skipped', reason: 'the caller did not speak' };
      const vendor = llmVendor(plan.provider);
      try {
        // A worker that dies mid-request is noticed within the heartbeat timeout, not the request's.
        const result = await heartbeating(structuredCompletion(
          clientFor(plan.provider),
          {
            model: plan.model,
            messages: analysisMessages(plan, call, rejected),
            name: 'call_analysis',
            description: 'The analysis of the finished call',
            schema: answerJsonSchema(plan),
            mode: vendor?.structuredOutput ?? 'json_schema',
          },
          Context.current().cancellationSignal,
        ));
        if (result.problem) return { kind: 'rejected', problem: result.problem, usage: result.usage };
        const checked = checkAnswer(plan, result.value);
        return checked.ok ? { kind: 'answer', answer: checked.answer, usage: result.usage } : { kind: 'rejected', problem: checked.problem, usage: result.usage };
      } catch (err) {
        countProviderError('llm', plan.provider);
        throw llmFailure(err);
      }
    },

    /** Where a re-run's `analysis_completed` event goes, and the call's analysis tokens so far. */
    async reanalysisBase({ callId }: { callId: string }) {
      const [lastSeq, call] = await Promise.all([
        db.models.CallEvent.max('seq', { where: { call_id: callId } }) as Promise<number | null>,
        db.models.Call.findByPk(callId, { attributes: ['analysis_prompt_tokens', 'analysis_completion_tokens'] }),
      ]);
      if (!call) throw ApplicationFailure.nonRetryable(`call ${callId} does not exist`, 'CallNotFound');
      const row = plain(call);
      return { nextSeq: (lastSeq ?? 0) + 1, promptTokens: row.analysis_prompt_tokens, completionTokens: row.analysis_completion_tokens };
    },
  };
}
