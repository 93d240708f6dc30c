/**
 * Post-call analysis as a step of the call workflow (and of the re-run workflow): ask the LLM for
 * the agent's summary, fields and success verdict, retried until it answers (LLM errors, timeouts:
 * Temporal's retry policy, with backoff, for a bounded window) and asked again when an answer fails
 * the schema check (a bounded number of answers). The outcome is always recorded: `done`, `failed`
 * with the error, or `skipped` with the reason. Workflow code: deterministic, no I/O.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ANALYSIS_EVENT, ANALYSIS_RETRY_DEFAULTS, type AnalysisPlan, type AnalysisRetryOptions, type AnalysisStatus, type CallAnalysis } from '../src/analysis/types';
import { CallSuccess } from '../src/shared/search-attributes';
import type { CallRecordPatch, CallWorkflowInput } from './call-definitions';
import type { CallRecorder } from './call-recorder';

export interface AnalysisOutcome {
  status: Exclude<AnalysisStatus, 'pending'>;
  analysis: CallAnalysis;
  usage: { prompt_tokens: number; completion_tokens: number };
}

const isoNow = () => new Date(Date.now()).toISOString().slice(0, 19);

function outcome(status: AnalysisOutcome['status'], model: string | null, usage: AnalysisOutcome['usage'], extra: Partial<CallAnalysis>): AnalysisOutcome {
  const analysis: CallAnalysis = { summary: null, fields: {}, success: null, success_reason: null, model, completed_at: isoNow(), error: null, skipped_reason: null, ...extra };
  return { status, analysis, usage };
}

/** Why the LLM could not be used: the activity's own message, not Temporal's wrapping. */
function llmError(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return cause.message;
  return cause instanceof Error ? cause.message : String(cause);
}

/** Runs one analysis to its outcome; never throws for LLM or answer problems (they are the outcome). */
export async function analyzeCall(callId: string, plan: AnalysisPlan, options: AnalysisRetryOptions = ANALYSIS_RETRY_DEFAULTS): Promise<AnalysisOutcome> {
  const { analyzeCall: ask } = proxyActivities<Activities>({
    startToCloseTimeout: `${options.attemptTimeoutSecs}s`,
    heartbeatTimeout: '10s',
    scheduleToCloseTimeout: `${options.retryWindowSecs}s`,
    retry: {
      initialInterval: `${options.retryInitialSecs}s`,
      backoffCoefficient: 2,
      maximumInterval: '5m',
      nonRetryableErrorTypes: ['LlmRequestRejected', 'CallNotFound'],
    },
  });
  const usage = { prompt_tokens: 0, completion_tokens: 0 };
  let rejected: string | undefined;
  for (let answers = 1; ; answers++) {
    let result: Awaited<ReturnType<typeof ask>>;
    try {
      result = await ask({ callId, plan, ...(rejected ? { rejected } : {}) });
    } catch (err) {
      return outcome('failed', plan.model, usage, { error: `the LLM gave no answer: ${llmError(err)}` });
    }
    if (result.kind === 'skipped') return outcome('skipped', null, usage, { skipped_reason: result.reason });
    usage.prompt_tokens += result.usage.prompt_tokens;
    usage.completion_tokens += result.usage.completion_tokens;
    if (result.kind === 'answer') return outcome('done', plan.model, usage, result.answer);
    if (answers >= options.answerAttempts) {
      return outcome('failed', plan.model, usage, { error: `the answer did not match the schema after ${answers} tries: ${result.problem}` });
    }
    rejected = result.problem;
  }
}

/** The call-record fields of an outcome; tokens are absolute (earlier analyses of the call + this one). */
export function analysisRecord(result: AnalysisOutcome, earlier = { promptTokens: 0, completionTokens: 0 }): CallRecordPatch {
  return {
    analysis_status: result.status,
    analysis: result.analysis,
    analysis_success: result.analysis.success,
    analysis_prompt_tokens: earlier.promptTokens + result.usage.prompt_tokens,
    analysis_completion_tokens: earlier.completionTokens + result.usage.completion_tokens,
  };
}

/** The `analysis_completed` event (and webhook) data: the whole analysis. */
export function analysisEventData(result: AnalysisOutcome, rerun: boolean): Record<string, unknown> {
  return { analysis_status: result.status, analysis: result.analysis, usage: result.usage, rerun };
}

/** Operators find failed outcomes in the Temporal UI (`CallSuccess = false`). */
export function markSuccess(result: AnalysisOutcome): void {
  if (result.analysis.success !== null) upsertSearchAttributes([{ key: CallSuccess, value: result.analysis.success }]);
}

// ---- in the call workflow -------------------------------------------------------------------

/** The analysis this call will run, or null. */
export function plannedAnalysis(input: CallWorkflowInput): AnalysisPlan | null {
  return input.agent.analysis;
}

/** Runs after the call's final record is written: the call's status and end time never wait for it. */
export async function runPostCallAnalysis(input: CallWorkflowInput, recorder: CallRecorder, plan: AnalysisPlan): Promise<void> {
  const result = await analyzeCall(input.callId, plan, input.options.analysis);
  recorder.record(ANALYSIS_EVENT, analysisEventData(result, false));
  await recorder.flush(analysisRecord(result));
  markSuccess(result);
}
