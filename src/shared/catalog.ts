/**
 * Fixed vocabularies of the product: supported providers (the first of each list is the default),
 * event types, builtin tools and pipeline defaults. Workflow-safe: no Node built-ins.
 *
 * The provider lists are the API's (the spec's) names, which request validation accepts. Which
 * of them can actually run is the adapter registries' business (src/providers/{stt,tts,llm}/
 * registry.ts): a vendor's descriptor is typed with these names, so no adapter can be registered
 * under a name the API would refuse, and an agent naming a provider that has no registered
 * adapter gets a warning ("no adapter in this build") and cannot place calls.
 */

export const STT_PROVIDERS = ['deepgram', 'openai', 'azure', 'sarvam'] as const;
export const LLM_PROVIDERS = ['openai', 'azure', 'groq'] as const;
export const TTS_PROVIDERS = ['cartesia', 'elevenlabs', 'deepgram', 'openai', 'azure'] as const;
export type SttProvider = (typeof STT_PROVIDERS)[number];
export type LlmProvider = (typeof LLM_PROVIDERS)[number];
export type TtsProvider = (typeof TTS_PROVIDERS)[number];
/** Only this STT provider has `stt_mode` (`transcribe` or `translate`). */
export const STT_MODE_PROVIDER = 'sarvam';
export const STT_MODES = ['transcribe', 'translate'] as const;

export const DEFAULT_LLM_MODEL: Record<(typeof LLM_PROVIDERS)[number], string> = {
  openai: 'gpt-4o-mini',
  azure: 'gpt-4o-mini',
  groq: 'llama-3.1-8b-instant',
};

export const TELEPHONY_PROVIDERS = ['twilio', 'exotel', 'plivo'] as const;
export type TelephonyProvider = (typeof TELEPHONY_PROVIDERS)[number];
/** The spec's neutral names, accepted on input. */
export const TELEPHONY_ALIASES: Record<string, TelephonyProvider> = {
  provider_a: 'twilio',
  provider_b: 'exotel',
  provider_c: 'plivo',
};

export const CALL_STATUSES = ['ringing', 'in_progress', 'completed', 'failed', 'no_answer'] as const;
export const END_REASONS = ['agent_ended', 'user_ended', 'idle_timeout', 'error'] as const;
export const DIRECTIONS = ['inbound', 'outbound'] as const;

/** Every call event type of the spec; all of them can be subscribed to by agent webhooks. */
export const EVENT_TYPES = [
  'call_started',
  'call_ended',
  'user_spoke',
  'agent_spoke',
  'tool_called',
  'tool_result',
  'node_entered',
  'node_transition',
  'context_injected',
  'tts_started',
  'tts_stopped',
  'interruption',
  'ttfb_metric',
  'llm_usage',
  'tts_usage',
  'call_status',
  'error',
  'analysis_completed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Tools the platform itself provides to flow nodes (freeform agents always have end_call). */
export const BUILTIN_TOOLS = ['end_call'] as const;

export const PIPELINE_DEFAULTS = {
  idle_warn_secs: 25,
  idle_end_secs: 50,
  vad_confidence: 0.5,
  vad_start_secs: 0.2,
  vad_stop_secs: 0.2,
  vad_min_volume: 0.4,
  min_words: 3,
};
export type PipelineSettings = typeof PIPELINE_DEFAULTS;

export const TOOL_TIMEOUT_DEFAULT_SECS = 10;
// Longer than this and the caller sits in silence; a slower backend should answer and finish later.
export const TOOL_TIMEOUT_MAX_SECS = 60;
