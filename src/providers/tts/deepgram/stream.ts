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
import WebSocket from 'ws';
import { MULAW_8K } from '../../../audio/format';
import { createLogger } from '../../../shared/logger';
import { Backoff } from '../../resilience';
import { countCharacters, openSpeechSocket, readyLatch, SpeechProviderError, wsBaseUrl } from '../../speech-socket';
import { TtsSessionBase } from '../session-base';
import type { TtsOptions, TtsSession } from '../types';

const log = createLogger('tts.deepgram');

export const DEEPGRAM_TTS_DEFAULTS = {
  baseUrl: 'wss://api.deepgram.com',
  model: 'aura-2-thalia-en',
} as const;

// Deepgram: at most 20 Flush messages per 60 s. Two are kept for the end of utterances.
const FLUSH_LIMIT = 20;
const FLUSH_WINDOW_MS = 60_000;
const FLUSH_RESERVE = 2;
// Deepgram refuses a Speak text longer than this.
const MAX_SPEAK_CHARS = 2000;
const CLOSE_TIMEOUT_MS = 1000;
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

export class DeepgramTts extends TtsSessionBase<Utterance> implements TtsSession {
  readonly provider = 'deepgram';
  readonly ready: Promise<void>;
  charactersSent = 0;

  private readonly url: string;
  private readonly headers: Record<string, string>;
  private readonly handshakeTimeoutMs?: number;
  private ws?: WebSocket;
  private wsOpen = false;
  private outbox: Array<{ id: string; data: string; flush: boolean }> = [];
  /** Utterances whose text reached the socket, oldest first: audio belongs to the first. */
  private onWire: Utterance[] = [];
  /** Clears sent and not yet acknowledged: audio and Flushed until then belong to cleared text. */
  private clearing = 0;
  private readonly flushTimes: number[] = [];
  private readonly backoff = new Backoff();
  private reconnectTimer?: NodeJS.Timeout;
  private closed = false;
  private settleReady?: { resolve: () => void; reject: (err: Error) => void };

  constructor(options: TtsOptions) {
    super(log);
    this.url = deepgramSpeakUrl(options);
    this.headers = { Authorization: `Token ${options.apiKey}` };
    this.handshakeTimeoutMs = options.handshakeTimeoutMs;
    const latch = readyLatch();
    this.ready = latch.promise;
    this.settleReady = latch;
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

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    for (const utt of [...this.utterances.values()]) this.cancel(utt.id);
    const ws = this.ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => ws.terminate(), CLOSE_TIMEOUT_MS);
      ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'Close' }));
      else ws.terminate();
    });
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

  private connect(): void {
    if (this.closed) return;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const ws = openSpeechSocket(this.url, { provider: 'Deepgram TTS', headers: this.headers, handshakeTimeoutMs: this.handshakeTimeoutMs }, (err) => {
      if (this.ws !== ws) return;
      this.ws = undefined;
      this.connectionLost(err);
    });
    this.ws = ws;
    ws.on('open', () => {
      this.wsOpen = true;
      this.clearing = 0;
      this.backoff.opened();
      this.connectionOpened();
      this.settleReady?.resolve();
      for (const m of this.outbox.splice(0)) {
        ws.send(m.data);
        const utt = this.utterances.get(m.id);
        if (utt) this.markOnWire(utt);
      }
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) this.handleAudio(data as Buffer);
      else this.handleMessage(data.toString());
    });
    ws.on('close', (code, reason) => {
      if (this.ws !== ws || !this.wsOpen) return; // a failed handshake is reported by openSpeechSocket
      this.ws = undefined;
      this.wsOpen = false;
      this.backoff.closed();
      if (this.closed) return;
      const text = reason.toString();
      this.connectionLost(new SpeechProviderError(`Deepgram TTS connection closed (${code}${text ? ` ${text}` : ''})`, { provider: 'deepgram', closeCode: code }));
    });
  }

  /** Reject the ready latch and end the utterances in flight (session-base); Deepgram-specific: which count as in flight. */
  private connectionLost(err: SpeechProviderError): void {
    this.settleReady?.reject(err);
    this.settleReady = undefined;
    const active = [...this.utterances.values()].filter((u) => u.textSent);
    this.outbox = [];
    // The new socket starts with an empty Deepgram buffer: nothing of the old one is on the wire.
    this.onWire = [];
    this.failInFlight(err, active);
  }

  /** Reopens with backoff, unless close() came first (possibly from an error listener). */
  protected override reconnectAfterLoss(): void {
    if (this.closed) return;
    this.reconnectTimer = setTimeout(() => this.connect(), this.backoff.next());
    this.reconnectTimer.unref();
  }

  private handleAudio(audio: Buffer): void {
    if (this.clearing > 0) return; // the tail of cleared speech
    const utt = this.onWire[0];
    if (utt) this.emit('audio', { id: utt.id, audio });
  }

  private handleMessage(text: string): void {
    let msg: DeepgramSpeakMessage;
    try {
      msg = JSON.parse(text) as DeepgramSpeakMessage;
    } catch {
      log.warn('ignoring a non-JSON message', { length: text.length });
      return;
    }
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
