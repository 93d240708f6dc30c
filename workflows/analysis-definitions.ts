/**
 * The re-run workflow's interface (workflows/analysis-workflow.ts), for the API that starts it:
 * types and the workflow id only (workflow-safe, and no workflow code in the API's process).
 */
import type { AnalysisPlan, AnalysisRetryOptions } from '../src/analysis/types';
import type { WebhookTarget } from './webhook-notify';

export interface ReanalysisInput {
  callId: string;
  plan: AnalysisPlan;
  options: AnalysisRetryOptions;
  /** The agent's webhook now, when it subscribes to `analysis_completed`; else null. */
  webhook: WebhookTarget | null;
}

/** One per call: a second request while one runs joins it (conflict policy USE_EXISTING). */
export const analysisWorkflowId = (callId: string) => `analysis-${callId}`;
