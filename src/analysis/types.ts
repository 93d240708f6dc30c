/**
 * Post-call analysis: the agent's `analysis` setting, the plan one analysis runs with, and the
 * result stored on the call. Types and constants only, so workflow code may import them.
 */

export const ANALYSIS_FIELD_TYPES = ['string', 'number', 'boolean', 'enum', 'date'] as const;
export type AnalysisFieldType = (typeof ANALYSIS_FIELD_TYPES)[number];

export interface AnalysisFieldDef {
  type: AnalysisFieldType;
  description: string;
  /** The allowed values of an `enum` field. */
  enum?: string[];
}

/** The agent setting as stored and answered by the API (null on the agent = no analysis). */
export interface AnalysisSettings {
  /** null = on when anything else is set (`analysisEnabled`). */
  enabled: boolean | null;
  /** null = DEFAULT_SUMMARY_PROMPT. */
  summary_prompt: string | null;
  fields: Record<string, AnalysisFieldDef>;
  /** Fields the answer must fill (the others may be null when the call did not tell). */
  required: string[];
  /** null = no success evaluation (`success` stays null). */
  success_criteria: string | null;
  /** null = the agent's own LLM provider and model. */
  llm_provider: string | null;
  llm_model: string | null;
}

/** One analysis's inputs, defaults resolved; a call's agent snapshot carries it. */
export interface AnalysisPlan {
  summaryPrompt: string;
  fields: Record<string, AnalysisFieldDef>;
  required: string[];
  successCriteria: string | null;
  provider: string;
  model: string;
}

/** The call event (and webhook) announcing an analysis's outcome. */
export const ANALYSIS_EVENT = 'analysis_completed';

export const ANALYSIS_STATUSES = ['pending', 'done', 'failed', 'skipped'] as const;
export type AnalysisStatus = (typeof ANALYSIS_STATUSES)[number];

/** What the model answered, once validated against the plan. */
export interface AnalysisAnswer {
  summary: string;
  fields: Record<string, string | number | boolean | null>;
  success: boolean | null;
  success_reason: string | null;
}

/** The result stored on the call and sent with `analysis_completed` (also for failed and skipped). */
export interface CallAnalysis {
  /** null when the analysis failed or was skipped. */
  summary: string | null;
  fields: AnalysisAnswer['fields'];
  success: boolean | null;
  success_reason: string | null;
  model: string | null;
  /** ISO 8601 UTC, like every API timestamp. */
  completed_at: string;
  /** Why the analysis failed (`failed`), else null. */
  error: string | null;
  /** Why no analysis was run (`skipped`), else null. */
  skipped_reason: string | null;
}

export const DEFAULT_SUMMARY_PROMPT =
  'Summarise the call in two or three neutral sentences: who called, what they wanted, and what was agreed or done.';

/** How an analysis is retried (from the configuration, carried in the workflow's input). */
export interface AnalysisRetryOptions {
  /** Answers that fail the schema check are asked for again, up to this many answers in all. */
  answerAttempts: number;
  /** LLM errors and timeouts: first retry after this, doubling up to 5 min … */
  retryInitialSecs: number;
  /** … for at most this long; then the analysis is recorded as failed. */
  retryWindowSecs: number;
  /** One LLM request's limit. */
  attemptTimeoutSecs: number;
}

export const ANALYSIS_RETRY_DEFAULTS: AnalysisRetryOptions = {
  answerAttempts: 3,
  retryInitialSecs: 2,
  retryWindowSecs: 24 * 3600,
  attemptTimeoutSecs: 120,
};
