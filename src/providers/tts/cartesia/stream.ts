/**
 * Cartesia streaming TTS (`/tts/websocket`). One WebSocket per call carries every agent turn:
 * each utterance is a Cartesia context (`context_id` = utterance id) fed with `continue: true`
 * per sentence and closed with an empty transcript and `continue: false`; barge-in sends
 * `{context_id, cancel: true}`. Audio arrives as base64 `chunk` messages, then `done`.
 *
 * Latency choices: the socket opens at construction (call start) and is re-opened at once if
 * Cartesia drops it (it closes idle sockets after about 5 minutes), so no turn pays for a
 * handshake; `max_buffer_delay_ms: 0` because the gateway already sends whole sentences and
 * Cartesia's default server-side buffering would hold the first sentence back for up to 3 s.
 */
import type WebSocket from 'ws';
import { MULAW_8K, type AudioFormat } from '../../../audio/format';
import { createLogger } from '../../../shared/logger';
import { countCharacters, parseVendorJson, SpeechProviderError, wsBaseUrl } from '../../speech-socket';
import { SocketTtsSession } from '../socket-session';
import type { TtsOptions, TtsSession } from '../types';

const log = createLogger('tts.cartesia');

export const CARTESIA_DEFAULTS = {
  baseUrl: 'wss://api.cartesia.ai',
  version: '2026-03-01',
  // Listed by the official @cartesia/cartesia-js 4.2.0 (sonic-3; sonic-3.5 is newer, dated variants too).
  model: 'sonic-3',
  // A stock Cartesia voice, so an agent without `voice` still speaks.
  voice: 'a0e99841-438c-4a64-b679-ae501e7d6091',
} as const;

// Reconnect delays after an unexpected close or failed attempt; the first retry is immediate.
const RECONNECT_DELAYS_MS = [0, 500, 1000, 2000, 5000, 10_000];
// Convenience keys in tts_settings that belong inside Cartesia's generation_config.
const GENERATION_CONFIG_KEYS = ['speed', 'volume', 'emotion'] as const;

interface Utterance {
  id: string;
  characters: number;
  textSent: boolean;
  /** Some request of this context was written to the current socket. */
  onWire: boolean;
  ended: boolean;
  lastChar: string;
}

export class CartesiaTts extends SocketTtsSession<Utterance, { contextId: string; data: string }> implements TtsSession {
  readonly provider = 'cartesia';
  charactersSent = 0;

  private readonly requestBase: Record<string, unknown>;

  constructor(options: TtsOptions) {
    const { cartesia_version, ...extras } = options.settings ?? {};
    const version = typeof cartesia_version === 'string' ? cartesia_version : CARTESIA_DEFAULTS.version;
    super(log, {
      url: `${wsBaseUrl(options.baseUrl || CARTESIA_DEFAULTS.baseUrl)}/tts/websocket`,
      headers: { 'X-API-Key': options.apiKey, 'Cartesia-Version': version },
      handshakeTimeoutMs: options.handshakeTimeoutMs,
      role: options.role,
      label: 'Cartesia',
      provider: 'cartesia',
      reconnectDelaysMs: RECONNECT_DELAYS_MS,
    });
    this.requestBase = cartesiaRequestBase(options, extras);
    this.connect();
  }

  startUtterance(id: string): void {
    this.claimId(id);
    this.utterances.set(id, { id, characters: 0, textSent: false, onWire: false, ended: false, lastChar: '' });
    // Real work does not wait out a background reconnect backoff.
    if (!this.ws) this.connect();
  }

  pushText(id: string, text: string): void {
    const utt = this.utterances.get(id);
    // Text for a cancelled or finished utterance is a normal race with barge-in: drop it.
    if (!utt || utt.ended || !text) return;
    // Cartesia concatenates a context's transcripts verbatim; keep sentences apart.
    const chunk = utt.lastChar && !/\s/.test(utt.lastChar) && !/^\s/.test(text) ? ` ${text}` : text;
    // Usage counts the reply text itself, not the separator added here.
    const n = countCharacters(text);
    utt.characters += n;
    this.charactersSent += n;
    utt.textSent = true;
    utt.lastChar = chunk.slice(-1);
    this.send(id, { ...this.requestBase, context_id: id, transcript: chunk, continue: true });
  }

  endText(id: string): void {
    const utt = this.utterances.get(id);
    if (!utt || utt.ended) return;
    utt.ended = true;
    if (!utt.textSent) {
      queueMicrotask(() => this.finish(utt, 'completed'));
      return;
    }
    this.send(id, { ...this.requestBase, context_id: id, transcript: '', continue: false });
  }

  cancel(id: string): void {
    const utt = this.utterances.get(id);
    if (!utt) return;
    // Requests still waiting for the socket are simply dropped; Cartesia only hears about the rest.
    this.outbox = this.outbox.filter((m) => m.contextId !== id);
    if (utt.onWire && this.wsOpen) this.ws!.send(JSON.stringify({ context_id: id, cancel: true }));
    this.finish(utt, 'cancelled');
  }

  private send(contextId: string, msg: Record<string, unknown>): void {
    const data = JSON.stringify(msg);
    if (this.wsOpen) {
      this.ws!.send(data);
      this.markOnWire(contextId);
      return;
    }
    this.outbox.push({ contextId, data });
    // Real work does not wait out a background reconnect backoff.
    if (!this.ws) this.connect();
  }

  protected sendQueued(ws: WebSocket, m: { contextId: string; data: string }): void {
    ws.send(m.data);
    this.markOnWire(m.contextId);
  }

  protected onSocketMessage(data: WebSocket.RawData, isBinary: boolean): void {
    if (!isBinary) this.handleMessage(data.toString());
  }

  /** In flight: text went out, or a request still waits in the outbox for this socket. */
  protected lostInFlight(): Utterance[] {
    return [...this.utterances.values()].filter((u) => u.textSent || this.outbox.some((m) => m.contextId === u.id));
  }

  private handleMessage(text: string): void {
    const msg = parseVendorJson<CartesiaMessage>(text, log);
    if (!msg) return;
    const utt = msg.context_id !== undefined ? this.utterances.get(msg.context_id) : undefined;
    if (msg.type === 'error') {
      const detail = msg.message ?? msg.error ?? msg.title ?? 'unknown error';
      const err = new SpeechProviderError(`Cartesia error${msg.status_code ? ` ${msg.status_code}` : ''}: ${detail}`, {
        provider: 'cartesia',
        utteranceId: utt?.id,
        fatal: msg.status_code !== undefined && msg.status_code >= 400 && msg.status_code < 500,
      });
      if (utt) {
        this.emitError(err);
        this.finish(utt, 'error');
      } else if (msg.context_id === undefined) {
        this.emitError(err);
      }
      return;
    }
    if (!utt) return; // late messages of a cancelled or finished context
    if (msg.type === 'chunk' && msg.data) this.emit('audio', { id: utt.id, audio: Buffer.from(msg.data, 'base64') });
    else if (msg.type === 'done') this.finish(utt, 'completed');
    // timestamps, phoneme_timestamps, flush_done: not used
  }

  private markOnWire(contextId: string): void {
    const utt = this.utterances.get(contextId);
    if (utt) utt.onWire = true;
  }
}

/** The fields every generation request repeats (Cartesia requires them unchanged within a context). */
export function cartesiaRequestBase(options: TtsOptions, extras: Record<string, unknown>): Record<string, unknown> {
  const rest = { ...extras };
  const generationConfig: Record<string, unknown> = { ...((rest.generation_config as Record<string, unknown>) ?? {}) };
  for (const key of GENERATION_CONFIG_KEYS) {
    if (key in rest) {
      generationConfig[key] = rest[key];
      delete rest[key];
    }
  }
  delete rest.generation_config;
  const request: Record<string, unknown> = {
    max_buffer_delay_ms: 0,
    ...rest,
    ...(Object.keys(generationConfig).length > 0 ? { generation_config: generationConfig } : {}),
    model_id: options.model || CARTESIA_DEFAULTS.model,
    voice: { mode: 'id', id: options.voice || CARTESIA_DEFAULTS.voice },
    output_format: cartesiaOutputFormat(options.format ?? MULAW_8K),
    ...(options.language ? { language: options.language } : {}),
  };
  // null in tts_settings removes one of our defaults (e.g. max_buffer_delay_ms).
  for (const [k, v] of Object.entries(request)) if (v === null) delete request[k];
  return request;
}

interface CartesiaMessage {
  type?: string;
  context_id?: string;
  data?: string;
  done?: boolean;
  status_code?: number;
  error?: string;
  message?: string;
  title?: string;
}

/** Cartesia produces every stream format itself: raw μ-law or 16-bit PCM at the stream's rate. */
export function cartesiaOutputFormat(format: AudioFormat) {
  return { container: 'raw', encoding: format.encoding === 'mulaw' ? 'pcm_mulaw' : 'pcm_s16le', sample_rate: format.sampleRate };
}
