/**
 * The provider-neutral streaming text-to-speech interface the media gateway talks to. One
 * TtsSession per call, created at call start so the vendor connection is warm before the first
 * sentence. Per agent turn: startUtterance(id), pushText(id, sentence) for each sentence as the
 * LLM produces it (audio for the first sentence is requested at once), endText(id) when the
 * reply is complete, or cancel(id) on barge-in. Audio comes back in `options.format` — the
 * format of the call's stream, so the gateway sends it on unconverted.
 *
 * Every started utterance ends with exactly one `done` event (completed, cancelled or error);
 * after `done` no more `audio` arrives for it.
 */
import type { EventEmitter } from 'node:events';
import type { AudioFormat } from '../../audio/format';
import type { ProviderConfig, VendorDescriptor } from '../vendor';
export { SpeechProviderError } from '../speech-socket';
import type { SpeechProviderError } from '../speech-socket';
import type { SocketRole } from '../socket-census';

export type TtsDoneReason = 'completed' | 'cancelled' | 'error';

export interface TtsEvents {
  /** Audio bytes in the session's `format`, any chunk size. */
  audio: [{ id: string; audio: Buffer }];
  /** `characters`: text characters sent to the vendor for this utterance (for tts_usage). */
  done: [{ id: string; reason: TtsDoneReason; characters: number }];
  /** `details.utteranceId` is set when the error ended one utterance. */
  error: [SpeechProviderError];
}

export interface TtsSession extends EventEmitter<TtsEvents> {
  readonly provider: string;
  /** Resolves when the first vendor connection is open (warm); rejects with its error. */
  readonly ready: Promise<void>;
  /** Ids must be unique within the session. */
  startUtterance(id: string): void;
  /** A chunk of the reply, normally one sentence; sent to the vendor immediately. */
  pushText(id: string, text: string): void;
  /** No more text for this utterance: the vendor finishes the audio, then `done`. */
  endText(id: string): void;
  /** Barge-in: stop generating now. `done` (reason cancelled) is emitted synchronously. */
  cancel(id: string): void;
  /** Total characters sent in this session. */
  readonly charactersSent: number;
  close(): Promise<void>;
}

export interface TtsOptions {
  apiKey: string;
  /** The format the audio must come in: the call stream's (μ-law 8 kHz unless set). */
  format?: AudioFormat;
  /** e.g. wss://api.cartesia.ai (CARTESIA_BASE_URL); http(s) is accepted too. */
  baseUrl?: string;
  model?: string;
  voice?: string;
  language?: string;
  /** The agent's `tts_settings`, vendor-specific (see README). */
  settings?: Record<string, unknown>;
  handshakeTimeoutMs?: number;
  /** What the session's sockets are for (default: a call's tts); see socket-census.ts. */
  role?: SocketRole;
}

/** The agent fields a TTS adapter reads. */
export interface AgentTtsFields {
  tts_provider: string;
  tts_model?: string | null;
  voice?: string | null;
  tts_language?: string | null;
  tts_settings?: Record<string, unknown> | null;
}

export interface TtsCreateOptions {
  /** The format the audio must come in (the call stream's); default μ-law 8 kHz. */
  format?: AudioFormat;
  /** What the session's sockets are for: tts_spare while it waits in the gateway's spares. */
  role?: SocketRole;
  /** Tuning for tests and tools (timeouts); the agent's fields win otherwise. */
  overrides?: Partial<TtsOptions>;
}

export interface TtsCapabilities {
  /** Audio for a sentence starts before its synthesis is complete (chunks as they are made). */
  streaming: boolean;
  /** BCP-47 tags (or prefixes) the vendor speaks, or 'any' when the voice/model decides. */
  languages: readonly string[] | 'any';
  /** Output formats the vendor produces itself; any other stream format is resampled once. */
  formats: readonly AudioFormat[];
  /** What `voice` means for this vendor, and the default. */
  voice: string;
  /** What `tts_settings` does for this vendor (one line, for the README matrix). */
  settings: string;
}

/**
 * One TTS vendor: `src/providers/tts/<vendor>/index.ts` exports `descriptor: TtsVendor`, and
 * `src/providers/tts/registry.ts` lists it.
 */
export interface TtsVendor extends VendorDescriptor {
  readonly capabilities: TtsCapabilities;
  /** A session for one call; throws when `missing(config)` is not null. */
  create(agent: AgentTtsFields, config: ProviderConfig, options?: TtsCreateOptions): TtsSession;
}
