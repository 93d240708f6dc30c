/**
 * Fixed vocabularies of the product: event types, builtin tools, call statuses and pipeline
 * defaults, plus the provider names of this build.
 *
 * The provider names are the registries' (src/providers/{stt,tts,llm}/registry.ts): a vendor is
 * its folder and its registry entry, and these live lists grow when a vendor is registered at
 * start-up. The first of each list is the default of new agents. Workflow code may import types
 * from here only (the registries load vendor code).
 */
import { DEFAULT_LLM_MODELS, LLM_PROVIDER_NAMES } from '../providers/llm/registry';
import { STT_PROVIDER_NAMES } from '../providers/stt/registry';
import { TTS_PROVIDER_NAMES } from '../providers/tts/registry';
import { DEFAULT_DICTATION_WAIT_SECS, DEFAULT_FALSE_INTERRUPTION_SECS, DEFAULT_MIN_WORDS, NO_EXTRA_PHRASES, type PhraseSettings } from './turn-policy';

export const STT_PROVIDERS: readonly string[] = STT_PROVIDER_NAMES;
export const LLM_PROVIDERS: readonly string[] = LLM_PROVIDER_NAMES;
export const TTS_PROVIDERS: readonly string[] = TTS_PROVIDER_NAMES;
/** Each LLM provider's default model (the vendor's descriptor says which). */
export const DEFAULT_LLM_MODEL: Readonly<Record<string, string>> = DEFAULT_LLM_MODELS;
/** The STT providers that take `stt_mode` (`transcribe` or `translate`). */
export { sttModeProviders } from '../providers/stt/registry';
export const STT_MODES = ['transcribe', 'translate'] as const;

export const CALL_STATUSES = ['ringing', 'in_progress', 'completed', 'failed', 'no_answer'] as const;
export const END_REASONS = ['agent_ended', 'user_ended', 'idle_timeout', 'error', 'transferred', 'voicemail'] as const;
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
  'agent_resumed',
  'ttfb_metric',
  'llm_usage',
  'tts_usage',
  'call_status',
  'error',
  'analysis_completed',
  'dtmf',
  'transfer_started',
  'transfer_completed',
  'transfer_failed',
  // A warm transfer's steps (docs/phone-operations.md#warm-transfer).
  'transfer_ringing',
  'transfer_briefing_started',
  'transfer_briefing_spoke',
  'transfer_briefing_reply',
  'transfer_briefing_completed',
  'voicemail_detected',
  'voicemail_message_left',
  'knowledge_retrieved',
  'knowledge_skipped',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** A campaign's status changes, on the webhook of the campaign's agent (docs/campaigns.md, "Webhooks"). */
export const CAMPAIGN_EVENT_TYPES = ['campaign_scheduled', 'campaign_started', 'campaign_paused', 'campaign_resumed', 'campaign_stopped', 'campaign_completed', 'campaign_cancelled'] as const;
export type CampaignEventType = (typeof CAMPAIGN_EVENT_TYPES)[number];

/**
 * Tools the platform itself provides to flow nodes (freeform agents always have end_call, and
 * transfer_call when the agent has transfer_destinations and the call's vendor can transfer).
 * send_dtmf presses keys on the line (an outbound agent in a company's phone menu).
 */
export const BUILTIN_TOOLS = ['end_call', 'send_dtmf', 'transfer_call'] as const;

/** `pipeline_settings.noise_suppression`: none, or RNNoise on the caller's audio at the gateway. */
export const NOISE_SUPPRESSION_MODES = ['off', 'rnnoise'] as const;
export type NoiseSuppression = (typeof NOISE_SUPPRESSION_MODES)[number];

export const PIPELINE_DEFAULTS = {
  idle_warn_secs: 25,
  idle_end_secs: 50,
  vad_confidence: 0.5,
  vad_start_secs: 0.2,
  vad_stop_secs: 0.2,
  vad_min_volume: 0.4,
  min_words: DEFAULT_MIN_WORDS,
  /** Backchannels ("uh-huh", "haan ji") added to or replacing the built-in ones of the agent's language (docs/media-gateway.md#backchannels). */
  backchannel_phrases: NO_EXTRA_PHRASES as PhraseSettings,
  /** Interruption words ("stop", "ruko") added to or replacing the built-in ones. */
  interrupt_phrases: NO_EXTRA_PHRASES as PhraseSettings,
  /** The caller's silence that ends a turn in the middle of dictating a number or an e-mail (docs/media-gateway.md#end-of-turn). */
  dictation_wait_secs: DEFAULT_DICTATION_WAIT_SECS,
  /** Speech over the agent pauses it; with no words after this long it resumes (0: no pause; docs/media-gateway.md#barge-in). */
  false_interruption_secs: DEFAULT_FALSE_INTERRUPTION_SECS,
  /** Keypresses: a pause this long ends the caller's input (docs/phone-operations.md). */
  dtmf_timeout_secs: 2,
  /** Keypresses: this many keys end the caller's input. */
  dtmf_max_digits: 32,
  /**
   * RNNoise on the caller's audio before the VAD and the STT (docs/media-gateway.md#noise). Off by
   * default: measured, it cut no false interruption on street noise (Silero already ignores it) nor
   * on babble (which it keeps, as speech), and costs ~25–40 CPU-ms per call-second.
   */
  noise_suppression: 'off' as NoiseSuppression,
};
export type PipelineSettings = typeof PIPELINE_DEFAULTS;

export const TOOL_TIMEOUT_DEFAULT_SECS = 10;
// Longer than this and the caller sits in silence; a slower backend should answer and finish later.
export const TOOL_TIMEOUT_MAX_SECS = 60;
