/**
 * A simulated phone caller on Plivo's Audio Streaming protocol: it opens the stream WebSocket the
 * way Plivo does (`start` with `extra_headers` and the negotiated `mediaFormat`), sends the
 * caller's audio as 20 ms `media` chunks in that content type in real time, and plays the agent's
 * `playAudio` back like Plivo: buffered at real-time rate; a `checkpoint` is answered with
 * `playedStream` only once the audio queued before it has played; `clearAudio` drops the buffer
 * and every pending checkpoint (those are never answered) and is answered with `clearedAudio`.
 * Hanging up closes the socket (Plivo sends no `stop`).
 *
 * Everything is recorded with wall-clock times so tests can assert what the caller heard and
 * when. All callers share one 20 ms clock.
 */
import crypto from 'node:crypto';
import WebSocket from 'ws';
import { bytesForMs, fromPcm16, silence, silenceByte, toPcm16, type AudioFormat } from '../../src/audio/format';
import { resample } from '../../src/audio/resampler';
import { Pacer, type Paced } from '../../src/gateway/pacer';
import { channelOf, readWavFile } from '../../src/gateway/recording/wav';
import { plivoMimeType } from '../../src/providers/telephony/plivo/media-messages';
import { nowMs, SPEECH_PEAK } from './twilio-caller';

export const FRAME_MS = 20;
const MAX_CATCH_UP_FRAMES = 10;

const clocks = new Map<number, Pacer>();
function clockFor(speed: number): Pacer {
  let clock = clocks.get(speed);
  if (!clock) clocks.set(speed, (clock = new Pacer(FRAME_MS / speed)));
  return clock;
}

export interface PlivoCallerOptions {
  /** The `<Stream>` URL. */
  url: string;
  format: AudioFormat;
  /** The `<Stream extraHeaders>` value, passed through as `extra_headers`. */
  extraHeaders?: string;
  accountId?: string;
  callId?: string;
  streamId?: string;
  /** Clock multiplier; only for unit tests of the fake itself. */
  speed?: number;
  keepMediaEvents?: boolean;
}

export interface ReceivedEvent {
  atMs: number;
  message: any;
}

export interface PlayedFrame {
  receivedAtMs: number;
  playedAtMs: number;
  /** The frame as 16-bit PCM at the stream's rate. */
  pcm: Int16Array;
}

export interface AnsweredCheckpoint {
  name: string;
  atMs: number;
}

export interface SpeechSpan {
  startedAtMs: number;
  endedAtMs: number;
  durationMs: number;
}

export interface CloseInfo {
  by: 'caller' | 'gateway';
  code: number;
  atMs: number;
}

type PlaybackItem = { kind: 'audio'; bytes: Buffer; offset: number; receivedAtMs: number } | { kind: 'checkpoint'; name: string };

interface Utterance {
  bytes: Buffer;
  offset: number;
  startedAtMs?: number;
  resolve(span: SpeechSpan): void;
}

/** Loads a WAV (any rate, first channel) as 16-bit PCM at `rate`. */
export function loadSpeech(path: string, rate: number): Int16Array {
  const wav = readWavFile(path);
  const mono = channelOf(wav, 0);
  return wav.sampleRate === rate ? mono : resample(mono, wav.sampleRate, rate);
}

export class PlivoCaller implements Paced {
  readonly accountId: string;
  readonly callId: string;
  readonly streamId: string;
  readonly url: string;
  readonly format: AudioFormat;
  readonly events: ReceivedEvent[] = [];
  readonly played: PlayedFrame[] = [];
  readonly checkpointsAnswered: AnsweredCheckpoint[] = [];
  /** Checkpoints dropped by a `clearAudio` before their audio played (never answered). */
  readonly checkpointsDropped: string[] = [];
  readonly clears: Array<{ atMs: number; droppedBytes: number }> = [];
  readonly dtmfSent: Array<{ digit: string; atMs: number }> = [];
  /** Messages Plivo would reject (bad JSON, wrong streamId, a content type other than the stream's…). */
  readonly protocolErrors: string[] = [];
  readonly closed: Promise<CloseInfo>;
  connectedAtMs = 0;

  private ws!: WebSocket;
  private readonly clock: Pacer;
  private readonly frameMs: number;
  private readonly frameBytes: number;
  private readonly silencePayload: string;
  private readonly keepMediaEvents: boolean;
  private startedPerf = 0;
  private framesDone = 0;
  private sequence = 0;
  private chunk = 0;
  private readonly speech: Utterance[] = [];
  private readonly playback: PlaybackItem[] = [];
  private bufferedBytes = 0;
  private playingUntilPerf = 0;
  private reached: string[] = [];
  private hangingUp = false;
  private closeInfo: CloseInfo | undefined;
  private resolveClosed!: (info: CloseInfo) => void;
  private readonly waiters = new Set<{ test: (e: ReceivedEvent) => boolean; resolve: (e: ReceivedEvent) => void }>();

  constructor(private readonly opts: PlivoCallerOptions) {
    this.url = opts.url;
    this.format = opts.format;
    this.accountId = opts.accountId ?? `MA${crypto.randomBytes(9).toString('hex').toUpperCase()}`;
    this.callId = opts.callId ?? crypto.randomUUID();
    this.streamId = opts.streamId ?? crypto.randomUUID();
    const speed = opts.speed ?? 1;
    this.clock = clockFor(speed);
    this.frameMs = FRAME_MS / speed;
    this.frameBytes = bytesForMs(opts.format, FRAME_MS);
    this.silencePayload = silence(opts.format, FRAME_MS).toString('base64');
    this.keepMediaEvents = opts.keepMediaEvents ?? true;
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
  }

  /** Opens the socket and sends `start`; rejects if the handshake fails. */
  open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url, { headers: { 'User-Agent': 'PlivoStream/1.0' }, perMessageDeflate: false });
      this.ws = ws;
      let opened = false;
      ws.on('unexpected-response', (_req, res) => {
        reject(new Error(`stream handshake refused: HTTP ${res.statusCode}`));
        res.resume();
        ws.terminate();
      });
      ws.on('error', (err) => {
        if (!opened) reject(err);
      });
      ws.on('open', () => {
        opened = true;
        this.connectedAtMs = nowMs();
        this.send({
          event: 'start',
          sequenceNumber: this.nextSequence(),
          start: {
            callId: this.callId,
            streamId: this.streamId,
            accountId: this.accountId,
            tracks: ['inbound'],
            mediaFormat: { encoding: plivoMimeType(this.format), sampleRate: this.format.sampleRate },
          },
          extra_headers: this.opts.extraHeaders ?? '',
        });
        this.startedPerf = performance.now();
        this.clock.add(this);
        resolve();
      });
      ws.on('message', (data, isBinary) => this.receive(data as Buffer, isBinary));
      ws.on('close', (code) => this.onClose(code));
    });
  }

  get isOpen(): boolean {
    return this.ws?.readyState === WebSocket.OPEN && !this.hangingUp;
  }

  /** Speaks PCM at the stream's rate (or a WAV path, converted). Resolves when the last chunk is sent. */
  say(audio: Int16Array | string): Promise<SpeechSpan> {
    const pcm = typeof audio === 'string' ? loadSpeech(audio, this.format.sampleRate) : audio;
    const encoded = fromPcm16(pcm, this.format);
    const frames = Math.max(1, Math.ceil(encoded.length / this.frameBytes));
    const bytes = Buffer.alloc(frames * this.frameBytes, silenceByte(this.format));
    encoded.copy(bytes);
    return new Promise((resolve) => this.speech.push({ bytes, offset: 0, resolve }));
  }

  /** Presses a key: reported as a `dtmf` message. */
  dtmf(digit: string): void {
    if (!/^[0-9*#]$/.test(digit)) throw new Error(`not a DTMF digit: ${digit}`);
    this.dtmfSent.push({ digit, atMs: nowMs() });
    this.send({ event: 'dtmf', sequenceNumber: this.nextSequence(), streamId: this.streamId, dtmf: { track: 'inbound', digit } });
  }

  /** Sends a raw message (tests of malformed input). */
  sendRaw(data: string | Buffer): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(data);
  }

  /** The caller hangs up: Plivo closes the socket (no stop message). */
  async hangup(): Promise<CloseInfo> {
    if (this.ws.readyState === WebSocket.OPEN && !this.hangingUp) {
      this.hangingUp = true;
      this.ws.close(1000);
    }
    return this.closed;
  }

  /** Drops the connection (a network failure). */
  drop(): void {
    this.hangingUp = true;
    this.ws.terminate();
  }

  /** PCM of all agent audio played so far, back to back. */
  heardAudio(): Int16Array {
    const out = new Int16Array(this.played.reduce((n, f) => n + f.pcm.length, 0));
    let at = 0;
    for (const f of this.played) {
      out.set(f.pcm, at);
      at += f.pcm.length;
    }
    return out;
  }

  speechFrames(peak = SPEECH_PEAK): PlayedFrame[] {
    return this.played.filter((f) => f.pcm.some((s) => Math.abs(s) > peak));
  }

  bufferedMs(): number {
    return (this.bufferedBytes / this.frameBytes) * FRAME_MS;
  }

  waitFor(test: (e: ReceivedEvent) => boolean, timeoutMs = 5000): Promise<ReceivedEvent> {
    const found = this.events.find(test);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter = {
        test,
        resolve: (e: ReceivedEvent) => {
          clearTimeout(timer);
          resolve(e);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`no matching message from the gateway within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  // ---- clock ---------------------------------------------------------------------------------

  pace(perfNow: number): boolean {
    if (this.ws.readyState !== WebSocket.OPEN || this.hangingUp) return true;
    const due = Math.floor((perfNow - this.startedPerf) / this.frameMs) + 1;
    for (let n = 0; this.framesDone < due && n < MAX_CATCH_UP_FRAMES; n++) {
      this.framesDone++;
      this.step(perfNow);
    }
    return true;
  }

  private step(perfNow: number): void {
    const at = nowMs();
    // Checkpoints reached during the previous frame: their audio has now finished playing.
    for (const name of this.reached) this.answerCheckpoint(name, at);
    this.reached = [];
    while (this.playback[0]?.kind === 'checkpoint') this.answerCheckpoint((this.playback.shift() as { name: string }).name, at);
    this.sendFrame(at);
    this.playFrame(perfNow, at);
  }

  private sendFrame(at: number): void {
    let payload = this.silencePayload;
    const u = this.speech[0];
    if (u) {
      if (u.startedAtMs === undefined) u.startedAtMs = at;
      payload = u.bytes.subarray(u.offset, u.offset + this.frameBytes).toString('base64');
      u.offset += this.frameBytes;
      if (u.offset >= u.bytes.length) {
        this.speech.shift();
        u.resolve({ startedAtMs: u.startedAtMs, endedAtMs: at, durationMs: (u.bytes.length / this.frameBytes) * FRAME_MS });
      }
    }
    this.chunk++;
    this.send({
      event: 'media',
      sequenceNumber: this.nextSequence(),
      streamId: this.streamId,
      // Epoch ms of the chunk's capture (its slot on the caller's clock), as Plivo stamps media.
      media: { track: 'inbound', timestamp: String(Math.round(this.connectedAtMs + (this.chunk - 1) * FRAME_MS)), chunk: this.chunk, payload },
      extra_headers: this.opts.extraHeaders ?? '',
    });
  }

  private playFrame(perfNow: number, at: number): void {
    const parts: Buffer[] = [];
    let bytes = 0;
    let receivedAtMs = 0;
    while (bytes < this.frameBytes && this.playback.length) {
      const head = this.playback[0];
      if (head.kind === 'checkpoint') {
        this.playback.shift();
        this.reached.push(head.name);
        continue;
      }
      if (!bytes) receivedAtMs = head.receivedAtMs;
      const take = Math.min(this.frameBytes - bytes, head.bytes.length - head.offset);
      parts.push(head.bytes.subarray(head.offset, head.offset + take));
      head.offset += take;
      bytes += take;
      if (head.offset >= head.bytes.length) this.playback.shift();
    }
    if (!bytes) return;
    this.bufferedBytes -= bytes;
    const frame = Buffer.concat(parts);
    this.played.push({ receivedAtMs, playedAtMs: at, pcm: Int16Array.from(toPcm16(frame, this.format)) });
    this.playingUntilPerf = perfNow + (bytes / this.frameBytes) * this.frameMs;
  }

  private answerCheckpoint(name: string, atMs: number): void {
    this.checkpointsAnswered.push({ name, atMs });
    this.send({ event: 'playedStream', sequenceNumber: this.nextSequence(), streamId: this.streamId, name });
  }

  // ---- from the gateway ----------------------------------------------------------------------

  private receive(data: Buffer, isBinary: boolean): void {
    const atMs = nowMs();
    if (isBinary) {
      this.protocolErrors.push('binary frame (stream messages are JSON text)');
      return;
    }
    let message: any;
    try {
      message = JSON.parse(data.toString('utf8'));
    } catch {
      this.protocolErrors.push(`invalid JSON: ${data.toString('utf8').slice(0, 80)}`);
      return;
    }
    const event: ReceivedEvent = { atMs, message };
    if (message?.event !== 'playAudio' || this.keepMediaEvents) this.events.push(event);
    for (const w of [...this.waiters]) {
      if (w.test(event)) {
        this.waiters.delete(w);
        w.resolve(event);
      }
    }
    if (message === null || typeof message !== 'object') {
      this.protocolErrors.push('message is not a JSON object');
      return;
    }
    switch (message.event) {
      case 'playAudio':
        return this.onPlayAudio(message, atMs);
      case 'checkpoint':
        return this.onCheckpoint(message);
      case 'clearAudio':
        return this.onClearAudio(message, atMs);
      default:
        this.protocolErrors.push(`unknown event ${JSON.stringify(message.event)}`);
    }
  }

  private checkStreamId(message: any): boolean {
    if (message.streamId === this.streamId) return true;
    this.protocolErrors.push(`${message.event} with streamId ${JSON.stringify(message.streamId)} (expected ${this.streamId})`);
    return false;
  }

  private onPlayAudio(message: any, atMs: number): void {
    const media = message.media;
    const payload = media?.payload;
    if (typeof payload !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(payload) || payload.length % 4 !== 0) {
      this.protocolErrors.push('playAudio media.payload is not base64');
      return;
    }
    // Plivo cannot switch codecs within a stream: the audio must be in the stream's content type.
    if (media.contentType !== plivoMimeType(this.format) || Number(media.sampleRate) !== this.format.sampleRate) {
      this.protocolErrors.push(`playAudio as ${media.contentType}/${media.sampleRate} on a ${plivoMimeType(this.format)}/${this.format.sampleRate} stream`);
      return;
    }
    const bytes = Buffer.from(payload, 'base64');
    if (this.format.encoding === 'pcm16' && bytes.length % 2) {
      this.protocolErrors.push('playAudio L16 payload with an odd number of bytes');
      return;
    }
    if (!bytes.length) return;
    this.playback.push({ kind: 'audio', bytes, offset: 0, receivedAtMs: atMs });
    this.bufferedBytes += bytes.length;
  }

  private onCheckpoint(message: any): void {
    if (!this.checkStreamId(message)) return;
    if (typeof message.name !== 'string' || message.name === '') {
      this.protocolErrors.push('checkpoint without a name');
      return;
    }
    const idle = this.playback.length === 0 && this.reached.length === 0 && performance.now() >= this.playingUntilPerf;
    if (idle) this.answerCheckpoint(message.name, nowMs());
    else this.playback.push({ kind: 'checkpoint', name: message.name });
  }

  private onClearAudio(message: any, atMs: number): void {
    if (!this.checkStreamId(message)) return;
    const dropped = this.bufferedBytes;
    // Checkpoints whose audio finished playing in the last frame were reached: they are answered.
    for (const name of this.reached) this.answerCheckpoint(name, atMs);
    this.reached = [];
    for (const item of this.playback) if (item.kind === 'checkpoint') this.checkpointsDropped.push(item.name);
    this.playback.length = 0;
    this.bufferedBytes = 0;
    this.clears.push({ atMs, droppedBytes: dropped });
    this.send({ event: 'clearedAudio', sequenceNumber: this.nextSequence(), streamId: this.streamId });
  }

  // ---- plumbing ------------------------------------------------------------------------------

  private nextSequence(): number {
    return ++this.sequence;
  }

  private send(message: object): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  private onClose(code: number): void {
    this.clock.remove(this);
    if (this.closeInfo) return;
    this.closeInfo = { by: this.hangingUp ? 'caller' : 'gateway', code, atMs: nowMs() };
    for (const u of this.speech.splice(0)) {
      const start = u.startedAtMs ?? this.closeInfo.atMs;
      u.resolve({ startedAtMs: start, endedAtMs: this.closeInfo.atMs, durationMs: this.closeInfo.atMs - start });
    }
    this.resolveClosed(this.closeInfo);
  }
}

export async function connectPlivoCaller(opts: PlivoCallerOptions): Promise<PlivoCaller> {
  const caller = new PlivoCaller(opts);
  await caller.open();
  return caller;
}
