/**
 * The agent editor's form values and their conversion to and from the API. Defaults belong to the
 * API: a new agent sends only what the user filled in, an existing one only what changed (PATCH
 * merges nested settings key by key), so the server applies its own defaults and rules.
 */
import type { Agent, AgentCreate } from '../api/types';
import { analysisFormPath, analysisFormValues, analysisRequest, ANALYSIS_FORM_PATHS, type AnalysisFormValues } from './analysis-form';
import { nearestField } from './field-errors';
import { PHRASE_FIELDS, PHRASE_FORM_PATHS, phraseFormValues, phraseRequest, type PhraseFormValues, type PhraseKey } from './phrase-form';
import { destinationFormPath, destinationRows, destinationsRequest, type DestinationRow } from './transfer-form';
import { voicemailFormValues, voicemailRequest, VOICEMAIL_FORM_PATHS, type VoicemailFormValues } from './voicemail-form';

type Pipeline = Agent['pipeline_settings'];
/** The numeric pipeline settings (the phrase lists have their own form values: phrase-form.ts). */
export type PipelineKey = Exclude<keyof Pipeline, PhraseKey>;

/** Every pipeline setting with a label; the type check below fails the build when the API adds one. */
export const PIPELINE_FIELDS = [
  { key: 'idle_warn_secs', label: 'Idle warning (s)', step: 1 },
  { key: 'idle_end_secs', label: 'Idle hang-up (s)', step: 1 },
  { key: 'vad_confidence', label: 'VAD confidence', step: 0.05 },
  { key: 'vad_start_secs', label: 'VAD start (s)', step: 0.05 },
  { key: 'vad_stop_secs', label: 'VAD stop (s)', step: 0.05 },
  { key: 'vad_min_volume', label: 'VAD minimum volume', step: 0.05 },
  { key: 'min_words', label: 'Minimum words to interrupt', step: 1 },
  { key: 'dictation_wait_secs', label: 'Pause ending dictation (s)', step: 0.1 },
  { key: 'false_interruption_secs', label: 'Resume after no words (s)', step: 0.1 },
  { key: 'dtmf_timeout_secs', label: 'Keypad pause ends input (s)', step: 0.5 },
  { key: 'dtmf_max_digits', label: 'Keypad input max keys', step: 1 },
] as const satisfies ReadonlyArray<{ key: PipelineKey; label: string; step: number }>;
// noise_suppression has no control in the form yet: the agent keeps its stored value (PATCH merges).
type Unlisted = Exclude<keyof Pipeline, (typeof PIPELINE_FIELDS)[number]['key'] | (typeof PHRASE_FIELDS)[number]['key'] | 'noise_suppression'>;
const everyPipelineKeyListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyPipelineKeyListed;

export interface ContextVariableRow {
  name: string;
  type: string;
  description: string;
}

export interface AgentFormValues {
  name: string;
  prompt: string;
  greeting: string;
  stt_provider: string | null;
  stt_model: string;
  stt_language: string;
  stt_mode: string | null;
  stt_settings: string;
  llm_provider: string | null;
  llm_model: string;
  temperature: number | string;
  max_tokens: number | string;
  tts_provider: string | null;
  tts_model: string;
  voice: string;
  tts_language: string;
  tts_settings: string;
  pipeline: Record<PipelineKey, number | string>;
  phrases: Record<PhraseKey, PhraseFormValues>;
  tool_ids: string[];
  pre_call_tool_ids: string[];
  mcp_tools: string[];
  knowledge_base_ids: string[];
  knowledge_mode: string;
  knowledge_timeout_ms: number | string;
  context_variables: ContextVariableRow[];
  webhook_url: string;
  webhook_events: string[];
  analysis: AnalysisFormValues;
  transfer_destinations: DestinationRow[];
  voicemail: VoicemailFormValues;
}

const json = (value: unknown) => (value && Object.keys(value).length ? JSON.stringify(value, null, 2) : '');
const numericPipeline = (p: Partial<Pipeline> | undefined) =>
  Object.fromEntries(PIPELINE_FIELDS.filter((f) => p?.[f.key] !== undefined).map((f) => [f.key, p![f.key] as number]));
const emptyPipeline = () => Object.fromEntries(PIPELINE_FIELDS.map((f) => [f.key, ''])) as Record<PipelineKey, number | string>;

/** Form values of a stored agent or a generated draft; an empty form for a new agent. */
export function toFormValues(agent?: Partial<AgentCreate> | Agent): AgentFormValues {
  const a = (agent ?? {}) as Partial<Agent>;
  return {
    name: a.name ?? '',
    prompt: a.prompt ?? '',
    greeting: a.greeting ?? '',
    stt_provider: a.stt_provider ?? null,
    stt_model: a.stt_model ?? '',
    stt_language: a.stt_language ?? '',
    stt_mode: a.stt_mode ?? null,
    stt_settings: json(a.stt_settings),
    llm_provider: a.llm_provider ?? null,
    llm_model: a.llm_model ?? '',
    temperature: a.llm_settings?.temperature ?? '',
    max_tokens: a.llm_settings?.max_tokens ?? '',
    tts_provider: a.tts_provider ?? null,
    tts_model: a.tts_model ?? '',
    voice: a.voice ?? '',
    tts_language: a.tts_language ?? '',
    tts_settings: json(a.tts_settings),
    pipeline: { ...emptyPipeline(), ...numericPipeline(a.pipeline_settings) },
    phrases: phraseFormValues(a.pipeline_settings),
    // Lists the API transforms (deduplicates) are `unknown` in its response schema.
    tool_ids: (a.tool_ids as string[] | undefined) ?? [],
    pre_call_tool_ids: (a.pre_call_tool_ids as string[] | undefined) ?? [],
    mcp_tools: (a.mcp_tools as string[] | undefined) ?? [],
    knowledge_base_ids: (a.knowledge_base_ids as string[] | undefined) ?? [],
    // The API's default; a new agent sends it only when changed.
    knowledge_mode: a.knowledge_mode ?? 'auto',
    knowledge_timeout_ms: a.knowledge_timeout_ms ?? '',
    context_variables: Object.entries(a.context_variables ?? {}).map(([name, v]) => ({ name, type: v.type, description: v.description ?? '' })),
    webhook_url: a.webhook_url ?? '',
    webhook_events: (a.webhook_events as string[] | undefined) ?? [],
    analysis: analysisFormValues(a.analysis as Agent['analysis'] | undefined),
    transfer_destinations: destinationRows(a.transfer_destinations),
    voicemail: voicemailFormValues(a.voicemail),
  };
}

export class FormInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

function parseJsonObject(field: string, text: string): Record<string, unknown> {
  if (!text.trim()) return {};
  try {
    const value = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value;
  } catch {
    // reported below
  }
  throw new FormInputError(field, 'must be a JSON object');
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const num = (v: number | string) => (v === '' ? null : Number(v));

/**
 * The request body: every field that differs from `initial` (for a new agent, the empty form).
 * Cleared optional text becomes null; a cleared pipeline or LLM setting becomes null (its default).
 */
export function toRequestBody(values: AgentFormValues, initial: AgentFormValues, isNew: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const text = (key: 'name' | 'prompt' | 'stt_language' | 'llm_model', nullable = false) => {
    if (values[key] !== initial[key]) body[key] = values[key] === '' && nullable ? null : values[key];
  };
  const optionalText = (key: 'greeting' | 'stt_model' | 'tts_model' | 'voice' | 'tts_language' | 'webhook_url') => {
    if (values[key] !== initial[key]) body[key] = values[key] === '' ? null : values[key];
  };
  text('name');
  text('prompt');
  optionalText('greeting');
  for (const key of ['stt_provider', 'llm_provider', 'tts_provider', 'stt_mode'] as const) {
    if (values[key] !== initial[key]) body[key] = values[key];
  }
  text('stt_language');
  text('llm_model');
  for (const key of ['stt_model', 'tts_model', 'voice', 'tts_language', 'webhook_url'] as const) optionalText(key);
  for (const key of ['stt_settings', 'tts_settings'] as const) {
    if (values[key] !== initial[key]) body[key] = parseJsonObject(key, values[key]);
  }

  const llm: Record<string, number | null> = {};
  if (values.temperature !== initial.temperature) llm.temperature = num(values.temperature);
  if (values.max_tokens !== initial.max_tokens) llm.max_tokens = num(values.max_tokens);
  if (Object.keys(llm).length) body.llm_settings = isNew ? dropNulls(llm) : llm;

  const pipeline: Record<string, unknown> = {};
  for (const { key } of PIPELINE_FIELDS) {
    if (values.pipeline[key] !== initial.pipeline[key]) pipeline[key] = num(values.pipeline[key]);
  }
  Object.assign(pipeline, phraseRequest(values.phrases, initial.phrases, isNew));
  if (Object.keys(pipeline).length) body.pipeline_settings = isNew ? dropNulls(pipeline) : pipeline;

  for (const key of ['tool_ids', 'pre_call_tool_ids', 'mcp_tools', 'knowledge_base_ids', 'webhook_events'] as const) {
    if (!same(values[key], initial[key])) body[key] = values[key];
  }
  if (values.knowledge_mode !== initial.knowledge_mode) body.knowledge_mode = values.knowledge_mode;
  // The budget has no null: a cleared field keeps the stored value.
  if (values.knowledge_timeout_ms !== initial.knowledge_timeout_ms && values.knowledge_timeout_ms !== '') body.knowledge_timeout_ms = Number(values.knowledge_timeout_ms);
  if (!same(values.context_variables, initial.context_variables)) {
    body.context_variables = Object.fromEntries(
      values.context_variables.filter((v) => v.name.trim()).map((v) => [v.name.trim(), { type: v.type || 'string', description: v.description }]),
    );
  }
  const analysis = analysisRequest(values.analysis, initial.analysis, !isNew && initial.analysis.enabled);
  if (analysis) body.analysis = analysis;
  const destinations = destinationsRequest(values.transfer_destinations, initial.transfer_destinations);
  if (destinations) body.transfer_destinations = destinations;
  const voicemail = voicemailRequest(values.voicemail, initial.voicemail);
  if (voicemail !== undefined) body.voicemail = voicemail;
  return body;
}

const dropNulls = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null));

/** The form path that shows an API error for a field path ("pipeline_settings.min_words" → "pipeline.min_words"). */
export function formPathOf(apiField: string): string | undefined {
  const destination = destinationFormPath(apiField);
  if (destination) return destination;
  const renamed = analysisFormPath(apiField)
    .replace(/^pipeline_settings\.(backchannel_phrases|interrupt_phrases)(\.mode)?.*$/, (_m, key: string, mode?: string) => `phrases.${key}.${mode ? 'mode' : 'text'}`)
    .replace(/^pipeline_settings\./, 'pipeline.')
    .replace(/^llm_settings\.(temperature|max_tokens)/, '$1')
    .replace(/^llm_settings$/, 'temperature');
  return nearestField(renamed, FORM_PATHS);
}

const FORM_PATHS: readonly string[] = [
  ...Object.keys(toFormValues()).filter((k) => k !== 'pipeline' && k !== 'phrases' && k !== 'analysis' && k !== 'voicemail'),
  ...PHRASE_FORM_PATHS,
  ...ANALYSIS_FORM_PATHS,
  ...VOICEMAIL_FORM_PATHS,
  ...PIPELINE_FIELDS.map((f) => `pipeline.${f.key}`),
  'pipeline_settings',
];

/** Provider pickers next to which the API's configuration warnings are shown. */
export const WARNING_FIELDS = ['stt_provider', 'llm_provider', 'tts_provider'] as const;

/**
 * Splits the API's `warnings` (e.g. "stt_provider sarvam: SARVAM_API_KEY is not set") by the
 * field they start with; the rest are general.
 */
export function warningsByField(warnings: readonly string[] | undefined) {
  const byField: Record<string, string[]> = {};
  const general: string[] = [];
  for (const w of warnings ?? []) {
    const field = WARNING_FIELDS.find((f) => w.startsWith(`${f} `) || w.startsWith(`${f}:`));
    if (field) (byField[field] ??= []).push(w);
    else general.push(w);
  }
  return { byField, general };
}
