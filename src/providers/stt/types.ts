/**
 * The provider-neutral streaming speech-to-text interface the media gateway talks to. One
 * SttStream per call: open it at call start (so the vendor connection is warm before the
 * caller speaks), feed caller audio as it arrives, call finalize() when local VAD says the
 * caller stopped, close() when the call ends.
 */
import type { EventEmitter } from 'node:events';
import type { AudioFormat } from '../../audio/format';
import type { ProviderConfig, VendorDescriptor } from '../vendor';
export { SpeechProviderError } from '../speech-socket';
import type { SpeechProviderError } from '../speech-socket';

export interface SttTranscript {
  text: string;
  /** This stretch of audio will not be revised any more. */
  isFinal: boolean;
  /** The vendor's endpointing decided the speaker paused (end of an utterance). */
  speechFinal: boolean;
  /** 0..1 */
  confidence: number;
  /** This final result answers a finalize() call. */
  fromFinalize: boolean;
  /** Position of the transcribed audio in the stream, in seconds. */
  startSecs: number;
  durationSecs: number;
}

export interface SttEvents {
  transcript: [SttTranscript];
  /** The vendor saw a gap after the last word (Deepgram `UtteranceEnd`). */
  utteranceEnd: [{ lastWordEndSecs: number | null }];
  /** The vendor's VAD heard speech begin (Deepgram `SpeechStarted`). */
  speechStarted: [{ timestampSecs: number | null }];
  error: [SpeechProviderError];
  /**
   * Only from the shared reconnecting wrapper (ResilientStt), never from an adapter: the stream is
   * gone for good (rejected, or still failing after every reconnect).
   */
  unavailable: [SpeechProviderError];
  /** Emitted once, whatever closed the stream. */
  closed: [{ code: number; reason: string }];
}

export interface SttStream extends EventEmitter<SttEvents> {
  readonly provider: string;
  /** Resolves when the vendor accepted the connection; rejects with the connection error. */
  readonly ready: Promise<void>;
  /**
   * Caller audio as `options.encoding` at `options.sampleRate`. The gateway decodes every stream
   * once and sends 16-bit PCM (`linear16`) at the stream's rate (8 or 16 kHz); an adapter whose
   * vendor wants something else converts here (src/audio/format.ts).
   */
  sendAudio(audio: Buffer): void;
  /** Ask for the final transcript of everything sent so far, now. */
  finalize(): void;
  /** Flushes outstanding results, then closes; resolves once the connection is gone. */
  close(): Promise<void>;
  /** Audio bytes handed to the vendor so far. */
  readonly audioBytesSent: number;
  /**
   * How long the gateway waits for the final after finalize() before going on without it. Unset:
   * the streaming default (FINAL_WAIT_MS). Segment-based adapters (one HTTP request per utterance)
   * need longer.
   */
  readonly finalWaitMs?: number;
}

export type SttEncoding = 'mulaw' | 'linear16';

export interface SttOptions {
  apiKey: string;
  /** e.g. wss://api.deepgram.com (DEEPGRAM_BASE_URL); http(s) is accepted too. */
  baseUrl?: string;
  model?: string;
  /** BCP-47 tag, e.g. `en`, `hi`, `en-IN`. */
  language?: string;
  /** The agent's `stt_mode` (Sarvam): `transcribe` (text in the spoken language) or `translate` (English). */
  mode?: string;
  encoding?: SttEncoding;
  sampleRate?: number;
  interimResults?: boolean;
  /** Vendor endpointing silence in ms; false turns it off. */
  endpointingMs?: number | false;
  utteranceEndMs?: number;
  vadEvents?: boolean;
  /** The agent's `stt_settings`: extra vendor query parameters; they win over the options above, null removes one. */
  settings?: Record<string, unknown>;
  /** Silence (no audio sent) after which a KeepAlive goes out. */
  keepAliveIntervalMs?: number;
  handshakeTimeoutMs?: number;
  /** How long close() waits for the vendor's final results before dropping the connection. */
  closeTimeoutMs?: number;
}

/** The agent fields an STT adapter reads. */
export interface AgentSttFields {
  stt_provider: string;
  stt_model?: string | null;
  stt_language?: string | null;
  /** `transcribe` or `translate` (only providers whose capabilities list modes). */
  stt_mode?: string | null;
  stt_settings?: Record<string, unknown> | null;
}

export interface SttCreateOptions {
  /**
   * The format of the audio the caller will pass to sendAudio(). The gateway sends 16-bit PCM at
   * the stream's rate; default μ-law 8 kHz. An adapter whose vendor wants something else converts.
   */
  format?: AudioFormat;
  /** Tuning for tests and tools (keep-alive interval, timeouts); the agent's fields win otherwise. */
  overrides?: Partial<SttOptions>;
}

export interface SttCapabilities {
  /** Results arrive while the caller speaks (a socket), not after an upload of the whole turn. */
  streaming: boolean;
  /** Partial (interim) transcripts before the final one. */
  interimResults: boolean;
  /** BCP-47 tags (or prefixes) the vendor accepts in `stt_language`, or 'any' when it checks itself. */
  languages: readonly string[] | 'any';
  /** Caller audio formats the vendor takes as they are; others are converted by the adapter. */
  formats: readonly AudioFormat[];
  /** `stt_mode` values the vendor supports (absent: stt_mode is not used). */
  modes?: readonly string[];
  /** What `stt_settings` does for this vendor (one line, for the README matrix). */
  settings: string;
}

/**
 * One STT vendor: `src/providers/stt/<vendor>/index.ts` exports `descriptor: SttVendor`, and
 * `src/providers/stt/registry.ts` lists it.
 */
export interface SttVendor extends VendorDescriptor {
  readonly capabilities: SttCapabilities;
  /** A stream for one call; throws when `missing(config)` is not null. */
  create(agent: AgentSttFields, config: ProviderConfig, options?: SttCreateOptions): SttStream;
}
