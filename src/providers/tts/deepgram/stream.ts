/**
 * Deepgram Aura streaming TTS (`/v1/speak` WebSocket). One socket per call carries every agent
 * turn in order: each sentence goes out as `{"type":"Speak","text"}`; `{"type":"Flush"}` makes
 * Deepgram synthesise what it holds and answers `Flushed` once that audio is sent; barge-in
 * sends `{"type":"Clear"}` (answered by `Cleared`). Audio arrives as binary frames, raw, in the
 * encoding and rate asked for in the URL: the call stream's.
 *
 * The socket has no per-utterance ids, so utterances are spoken strictly in the order their text
 * reached the wire: audio belongs to the oldest utterance on the wire, and it is complete when its
 * last Flush is acknowledged. The gateway speaks one utterance at a time, which is what this needs.
 *
 * Latency: the socket opens at construction (call start) and reopens after a drop (shared
 * Backoff); every sentence is flushed at once so its audio starts without waiting for the rest of
 * the reply — unless Deepgram's limit of 20 Flushes a minute is near, in which case later
 * sentences of an utterance ride on its final Flush.
 */
import type WebSocket from 'ws';
import { MULAW_8K } from '../../../audio/format';
import { createLogger } from '../../../shared/logger';
import { countCharacters, parseVendorJson, SpeechProviderError, wsBaseUrl } from '../../speech-socket';
import { SocketTtsSession } from '../socket-session';
import type { TtsOptions, TtsSession } from '../types';

const log = createLogger('tts.deepgram');

export const DEEPGRAM_TTS_DEFAULTS = {
  baseUrl: 'wss://api.deepgram.com',
  // Listed by the official @deepgram/sdk 5.13.0 (SpeakV1Model: aura-2-thalia-en).
  model: 'aura-2-thalia-en',
} as const;

// Deepgram: at most 20 Flush messages per 60 s. Two are kept for the end of utterances.
const FLUSH_LIMIT = 20;
const FLUSH_WINDOW_MS = 60_000;
const FLUSH_RESERVE = 2;
// Deepgram refuses a Speak text longer than this.
const MAX_SPEAK_CHARS = 2000;
// Query parameters that describe the audio: always the stream's, whatever tts_settings say.
const AUDIO_PARAMETERS = new Set(['encoding', 'sample_rate', 'container']);

interface Utterance {
  id: string;
  characters: number;
  textSent: boolean;
  ended: boolean;
  /** Flushes sent for this utterance and not yet acknowledged. */
  pendingFlushes: number;
  /** Text went out after its last Flush. */
  unflushed: boolean;
}

/** `/v1/speak` URL: the model (voice), the stream's audio format, then tts_settings as extra parameters. */
export function deepgramSpeakUrl(options: TtsOptions): string {
  const format = options.format ?? MULAW_8K;
  const query = new URLSearchParams({
    model: options.voice || options.model || DEEPGRAM_TTS_DEFAULTS.model,
    encoding: format.encoding === 'mulaw' ? 'mulaw' : 'linear16',
    sample_rate: String(format.sampleRate),
  });
  for (const [key, value] of Object.entries(options.settings ?? {})) {
    if (AUDIO_PARAMETERS.has(key)) continue;
    if (value === null || value === undefined) query.delete(key);
    else query.set(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  return `${wsBaseUrl(options.baseUrl || DEEPGRAM_TTS_DEFAULTS.baseUrl)}/v1/speak?${query.toString()}`;
}

export class DeepgramTts extends SocketTtsSession<Utterance, { id: string; data: string; flush: boolean }> implements TtsSession {
  readonly provider = 'deepgram';
  charactersSent = 0;

  /** Utterances whose text reached the socket, oldest first: audio belongs to the first. */
  private onWire: Utterance[] = [];
  /** Clears sent and not yet acknowledged: audio and Flushed until then belong to cleared text. */
  private clearing = 0;
  private readonly flushTimes: number[] = [];

  constructor(options: TtsOptions) {
    super(log, {
      url: deepgramSpeakUrl(options),
      headers: { Authorization: `Token ${options.apiKey}` },
      handshakeTimeoutMs: options.handshakeTimeoutMs,
      role: options.role,
      label: 'Deepgram TTS',
      provider: 'deepgram',
    });
    this.connect();
  }

  startUtterance(id: string): void {
    this.claimId(id);
    this.utterances.set(id, { id, characters: 0, textSent: false, ended: false, pendingFlushes: 0, unflushed: false });
    if (!this.ws) this.connect();
  }

  pushText(id: string, text: string): void {
    const utt = this.utterances.get(id);
    if (!utt || utt.ended || !text) return;
    const n = countCharacters(text);
    utt.characters += n;
    this.charactersSent += n;
    utt.textSent = true;
    // Deepgram joins Speak texts verbatim; keep sentences apart.
    const spaced = text.endsWith(' ') ? text : `${text} `;
    for (const piece of splitText(spaced)) this.send(utt, { type: 'Speak', text: piece }, false);
    utt.unflushed = true;
    if (this.flushAllowed(FLUSH_RESERVE)) this.flush(utt);
  }

  endText(id: string): void {
    const utt = this.utterances.get(id);
    if (!utt || utt.ended) return;
    utt.ended = true;
    if (!utt.textSent) {
      queueMicrotask(() => this.finish(utt, 'completed'));
      return;
    }
    if (utt.unflushed) this.flush(utt);
    else this.completeIfDone(utt);
  }

  cancel(id: string): void {
    const utt = this.utterances.get(id);
    if (!utt) return;
    this.outbox = this.outbox.filter((m) => m.id !== id);
    if (this.onWire.includes(utt) && this.wsOpen) {
      this.ws!.send(JSON.stringify({ type: 'Clear' }));
      this.clearing++;
      // Clear empties Deepgram's whole buffer: anything else on the wire is gone with it.
      for (const other of this.onWire) {
        if (other === utt) continue;
        this.emitError(new SpeechProviderError('Deepgram TTS: utterance cleared by a barge-in on another one', { provider: 'deepgram', utteranceId: other.id }));
        this.finish(other, 'error');
      }
      this.onWire = [];
    }
    this.onWire = this.onWire.filter((u) => u !== utt);
    this.finish(utt, 'cancelled');
  }

  private flushAllowed(reserve: number): boolean {
    const now = Date.now();
    while (this.flushTimes.length && now - this.flushTimes[0]! >= FLUSH_WINDOW_MS) this.flushTimes.shift();
    return this.flushTimes.length < FLUSH_LIMIT - reserve;
  }

  private flush(utt: Utterance): void {
    this.flushTimes.push(Date.now());
    utt.pendingFlushes++;
    utt.unflushed = false;
    this.send(utt, { type: 'Flush' }, true);
  }

  private send(utt: Utterance, msg: Record<string, unknown>, flush: boolean): void {
    const data = JSON.stringify(msg);
    if (this.wsOpen) {
      this.ws!.send(data);
      this.markOnWire(utt);
      return;
    }
    this.outbox.push({ id: utt.id, data, flush });
    if (!this.ws) this.connect();
  }

  private markOnWire(utt: Utterance): void {
    if (!this.onWire.includes(utt) && this.utterances.get(utt.id) === utt) this.onWire.push(utt);
  }

  private completeIfDone(utt: Utterance): void {
    if (!utt.ended || utt.unflushed || utt.pendingFlushes > 0) return;
    this.onWire = this.onWire.filter((u) => u !== utt);
    this.finish(utt, 'completed');
  }

  protected sendQueued(ws: WebSocket, m: { id: string; data: string; flush: boolean }): void {
    ws.send(m.data);
    const utt = this.utterances.get(m.id);
    if (utt) this.markOnWire(utt);
  }

  protected override onSocketOpen(): void {
    this.clearing = 0;
  }

  protected onSocketMessage(data: WebSocket.RawData, isBinary: boolean): void {
    if (isBinary) this.handleAudio(data as Buffer);
    else this.handleMessage(data.toString());
  }

  /** In flight: utterances with text sent. The new socket starts with an empty Deepgram buffer. */
  protected lostInFlight(): Utterance[] {
    const active = [...this.utterances.values()].filter((u) => u.textSent);
    this.onWire = [];
    return active;
  }

  protected override goodbye(ws: WebSocket): void {
    ws.send(JSON.stringify({ type: 'Close' }));
  }

  private handleAudio(audio: Buffer): void {
    if (this.clearing > 0) return; // the tail of cleared speech
    const utt = this.onWire[0];
    if (utt) this.emit('audio', { id: utt.id, audio });
  }

  private handleMessage(text: string): void {
    const msg = parseVendorJson<DeepgramSpeakMessage>(text, log);
    if (!msg) return;
    switch (msg.type) {
      case 'Flushed': {
        if (this.clearing > 0) return;
        const utt = this.onWire.find((u) => u.pendingFlushes > 0);
        if (!utt) return;
        utt.pendingFlushes--;
        this.completeIfDone(utt);
        return;
      }
      case 'Cleared':
        this.clearing = Math.max(0, this.clearing - 1);
        return;
      case 'Warning':
        log.warn('Deepgram TTS warning', { code: msg.code, description: msg.description ?? msg.warn_msg });
        return;
      case 'Error': {
        const detail = msg.description ?? msg.err_msg ?? msg.message ?? 'unknown error';
        const utt = this.onWire[0];
        const err = new SpeechProviderError(`Deepgram TTS error: ${detail}`, { provider: 'deepgram', utteranceId: utt?.id });
        this.emitError(err);
        if (utt) {
          this.onWire.shift();
          this.finish(utt, 'error');
        }
        return;
      }
      default:
        log.debug('ignoring message', { type: msg.type }); // Metadata
    }
  }
}

function splitText(text: string): string[] {
  if (text.length <= MAX_SPEAK_CHARS) return [text];
  const out: string[] = [];
  let rest = text;
  while (rest.length > MAX_SPEAK_CHARS) {
    const cut = rest.lastIndexOf(' ', MAX_SPEAK_CHARS);
    const at = cut > 0 ? cut + 1 : MAX_SPEAK_CHARS;
    out.push(rest.slice(0, at));
    rest = rest.slice(at);
  }
  if (rest) out.push(rest);
  return out;
}

interface DeepgramSpeakMessage {
  type?: string;
  sequence_id?: number;
  description?: string;
  err_msg?: string;
  warn_msg?: string;
  message?: string;
  code?: string;
}
