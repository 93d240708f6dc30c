/**
 * A simulated phone caller on Twilio's Media Streams protocol: it opens the stream WebSocket the
 * way Twilio does (signed upgrade, `connected`, `start`), sends the caller's audio as 160-byte
 * mu-law `media` frames every 20 ms in real time, and plays the agent's audio back like Twilio:
 * buffered, at real-time rate; a `mark` is echoed once the audio queued before it has played;
 * `clear` drops what is buffered and echoes every pending mark at once.
 *
 * Everything is recorded with wall-clock times (epoch ms, sub-millisecond) so tests can assert
 * what the caller heard and when. All callers share one 20 ms timer, so a process can hold many.
 */
import crypto from 'node:crypto';
import WebSocket from 'ws';
import { decodeMulaw, encodeMulaw, MULAW_SILENCE } from '../../src/audio/g711';
import { resample } from '../../src/audio/resampler';
import { Pacer, type Paced } from '../../src/gateway/pacer';
import { channelOf, readWavFile } from '../../src/gateway/recording/wav';

export const FRAME_BYTES = 160;
export const FRAME_MS = 20;
const SAMPLE_RATE = 8000;
const SILENCE_PAYLOAD = Buffer.alloc(FRAME_BYTES, MULAW_SILENCE).toString('base64');
// After a long event-loop stall a caller sends at most this many overdue frames per tick, so it
// catches up in a burst of bounded size rather than flooding the socket at once.
const MAX_CATCH_UP_FRAMES = 10;
/** Peak sample above which a played frame counts as speech rather than silence or noise. */
export const SPEECH_PEAK = 500;

/** Wall-clock time in epoch milliseconds, with sub-millisecond precision. */
export const nowMs = (): number => performance.timeOrigin + performance.now();

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');
export const newSid = (prefix: string) => `${prefix}${hex(16)}`;

// The gateway's own drift-free pacer: one timer for all callers at a given speed.
const clocks = new Map<number, Pacer>();
function clockFor(speed: number): Pacer {
  let clock = clocks.get(speed);
  if (!clock) clocks.set(speed, (clock = new Pacer(FRAME_MS / speed)));
  return clock;
}

export interface TwilioCallerOptions {
  /** The `<Stream url>` to connect to (wss:// in production; ws:// accepted for local tests). */
  url: string;
  accountSid?: string;
  callSid?: string;
  streamSid?: string;
  /** The `<Parameter>`s of the TwiML, delivered in `start.customParameters`. */
  customParameters?: Record<string, string>;
  /** Sign the upgrade with X-Twilio-Signature like Twilio (HMAC-SHA1 of the URL, no params). */
  authToken?: string;
  /** Clock multiplier; only for unit tests of the fake itself. Real-time (1) otherwise. */
  speed?: number;
  /** Keep received `media` messages in `events` (default true; false saves memory in benchmarks). */
  keepMediaEvents?: boolean;
}

export interface ReceivedEvent {
  atMs: number;
  message: any;
}

export interface PlayedFrame {
  /** When the first byte of this frame arrived in a `media` message. */
  receivedAtMs: number;
  /** When this 20 ms frame started playing to the caller. */
  playedAtMs: number;
  mulaw: Buffer;
}

export interface EchoedMark {
  name: string;
  atMs: number;
  /** Echoed because of a `clear`, not because its audio played. */
  cleared: boolean;
}

export interface SpeechSpan {
  /** When the first frame of the utterance was sent. */
  startedAtMs: number;
  /** When the last frame was sent. */
  endedAtMs: number;
  durationMs: number;
}

export interface CloseInfo {
  by: 'caller' | 'gateway';
  code: number;
  atMs: number;
}

type PlaybackItem = { kind: 'audio'; bytes: Buffer; offset: number; receivedAtMs: number } | { kind: 'mark'; name: string };

interface Utterance {
  mulaw: Buffer;
  offset: number;
  startedAtMs?: number;
  resolve(span: SpeechSpan): void;
}

/** Loads a WAV (any rate, mono or stereo: first channel) as 8 kHz 16-bit PCM. */
export function loadSpeechWav(path: string): Int16Array {
  const wav = readWavFile(path);
  const mono = channelOf(wav, 0);
  return wav.sampleRate === SAMPLE_RATE ? mono : resample(mono, wav.sampleRate, SAMPLE_RATE);
}

/** A sine tone as 8 kHz PCM: a stand-in for speech where only "loud vs silent" matters. */
export function tonePcm(durationMs: number, frequencyHz = 440, amplitude = 8000): Int16Array {
  const n = Math.round((durationMs * SAMPLE_RATE) / 1000);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * frequencyHz * i) / SAMPLE_RATE));
  return out;
}

export function framePeak(mulaw: Uint8Array): number {
  let peak = 0;
  for (const s of decodeMulaw(mulaw)) peak = Math.max(peak, Math.abs(s));
  return peak;
}

export class TwilioCaller implements Paced {
  readonly accountSid: string;
  readonly callSid: string;
  readonly streamSid: string;
  readonly url: string;
  /** Every message received from the gateway, in order. */
  readonly events: ReceivedEvent[] = [];
  /** Every 20 ms frame of agent audio played to the caller. */
  readonly played: PlayedFrame[] = [];
  readonly marksEchoed: EchoedMark[] = [];
  readonly clears: Array<{ atMs: number; droppedBytes: number }> = [];
  readonly dtmfSent: Array<{ digit: string; atMs: number }> = [];
  /** Messages from the gateway Twilio would reject (bad JSON, wrong streamSid, …). */
  readonly protocolErrors: string[] = [];
  /** Resolves when the socket has closed, whichever side closed it. */
  readonly closed: Promise<CloseInfo>;
  connectedAtMs = 0;

  private ws!: WebSocket;
  private readonly clock: Pacer;
  private readonly frameMs: number;
  private readonly keepMediaEvents: boolean;
  private startedPerf = 0;
  private framesDone = 0;
  private sequence = 0;
  private chunk = 0;
  private readonly speech: Utterance[] = [];
  private readonly playback: PlaybackItem[] = [];
  private bufferedBytes = 0;
  private playingUntilPerf = 0;
  private reachedMarks: string[] = [];
  private hangingUp = false;
  private closeInfo: CloseInfo | undefined;
  private resolveClosed!: (info: CloseInfo) => void;
  private readonly waiters = new Set<{ test: (e: ReceivedEvent) => boolean; resolve: (e: ReceivedEvent) => void }>();

  constructor(private readonly opts: TwilioCallerOptions) {
    this.url = opts.url;
    this.accountSid = opts.accountSid ?? newSid('AC');
    this.callSid = opts.callSid ?? newSid('CA');
    this.streamSid = opts.streamSid ?? newSid('MZ');
    const speed = opts.speed ?? 1;
    this.clock = clockFor(speed);
    this.frameMs = FRAME_MS / speed;
    this.keepMediaEvents = opts.keepMediaEvents ?? true;
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
  }

  /** Opens the socket and sends `connected` + `start`; rejects if the handshake fails. */
  open(): Promise<void> {
    const headers: Record<string, string> = { 'User-Agent': 'Twilio.TmeWs/1.0' };
    if (this.opts.authToken) {
      headers['X-Twilio-Signature'] = crypto.createHmac('sha1', this.opts.authToken).update(this.url, 'utf8').digest('base64');
    }
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url, { headers, perMessageDeflate: false });
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
        this.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
        this.send({
          event: 'start',
          sequenceNumber: this.nextSequence(),
          start: {
            accountSid: this.accountSid,
            streamSid: this.streamSid,
            callSid: this.callSid,
            tracks: ['inbound'],
            mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: SAMPLE_RATE, channels: 1 },
            customParameters: this.opts.customParameters ?? {},
          },
          streamSid: this.streamSid,
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

  /**
   * Speaks: queues 8 kHz PCM (or a WAV file path, converted) after anything already queued.
   * Resolves when the last frame has been sent.
   */
  say(audio: Int16Array | string): Promise<SpeechSpan> {
    const pcm = typeof audio === 'string' ? loadSpeechWav(audio) : audio;
    const frames = Math.max(1, Math.ceil(pcm.length / FRAME_BYTES));
    const mulaw = Buffer.alloc(frames * FRAME_BYTES, MULAW_SILENCE);
    encodeMulaw(pcm).copy(mulaw);
    return new Promise((resolve) => this.speech.push({ mulaw, offset: 0, resolve }));
  }

  /** Presses a key: Twilio reports DTMF as a `dtmf` message. */
  dtmf(digit: string): void {
    if (!/^[0-9*#]$/.test(digit)) throw new Error(`not a DTMF digit: ${digit}`);
    this.dtmfSent.push({ digit, atMs: nowMs() });
    this.send({ event: 'dtmf', streamSid: this.streamSid, sequenceNumber: this.nextSequence(), dtmf: { track: 'inbound_track', digit } });
  }

  /** The caller hangs up: Twilio sends `stop` and closes the socket. */
  async hangup(): Promise<CloseInfo> {
    if (this.ws.readyState === WebSocket.OPEN && !this.hangingUp) {
      this.send({
        event: 'stop',
        sequenceNumber: this.nextSequence(),
        streamSid: this.streamSid,
        stop: { accountSid: this.accountSid, callSid: this.callSid },
      });
      this.hangingUp = true;
      this.ws.close(1000);
    }
    return this.closed;
  }

  /** Drops the connection without `stop` (a network failure). */
  drop(): void {
    this.hangingUp = true;
    this.ws.terminate();
  }

  /** Decoded 8 kHz PCM of all agent audio played so far, back to back. */
  heardAudio(): Int16Array {
    const out = new Int16Array(this.played.reduce((n, f) => n + f.mulaw.length, 0));
    let at = 0;
    for (const f of this.played) {
      decodeMulaw(f.mulaw, out.subarray(at));
      at += f.mulaw.length;
    }
    return out;
  }

  /** Played frames that carry sound (peak above SPEECH_PEAK), e.g. to check the greeting was audio. */
  speechFrames(peak = SPEECH_PEAK): PlayedFrame[] {
    return this.played.filter((f) => framePeak(f.mulaw) > peak);
  }

  /** Milliseconds of agent audio received but not yet played. */
  bufferedMs(): number {
    return (this.bufferedBytes / FRAME_BYTES) * FRAME_MS;
  }

  /** Resolves with the first received event (already received or future) that matches. */
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

  /** Resolves once a mark with this name has been echoed. */
  async waitForMark(name: string, timeoutMs = 5000): Promise<EchoedMark> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const mark = this.marksEchoed.find((m) => m.name === name);
      if (mark) return mark;
      if (Date.now() > deadline) throw new Error(`mark "${name}" not echoed within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  // ---- clock ---------------------------------------------------------------------------------

  /** One pacer tick; the caller stays on the clock until it is removed when the call closes. */
  pace(perfNow: number): boolean {
    this.tick(perfNow);
    return true;
  }

  private tick(perfNow: number): void {
    if (this.ws.readyState !== WebSocket.OPEN || this.hangingUp) return;
    const due = Math.floor((perfNow - this.startedPerf) / this.frameMs) + 1;
    for (let n = 0; this.framesDone < due && n < MAX_CATCH_UP_FRAMES; n++) {
      this.framesDone++;
      this.step(perfNow);
    }
  }

  private step(perfNow: number): void {
    const at = nowMs();
    // Marks reached during the previous frame: its audio has now finished playing.
    for (const name of this.reachedMarks) this.echoMark(name, at, false);
    this.reachedMarks = [];
    this.echoMarksAtHead(at);
    this.sendFrame(at);
    this.playFrame(perfNow, at);
  }

  private sendFrame(at: number): void {
    let payload = SILENCE_PAYLOAD;
    const utterance = this.speech[0];
    if (utterance) {
      if (utterance.startedAtMs === undefined) utterance.startedAtMs = at;
      payload = utterance.mulaw.subarray(utterance.offset, utterance.offset + FRAME_BYTES).toString('base64');
      utterance.offset += FRAME_BYTES;
      if (utterance.offset >= utterance.mulaw.length) {
        this.speech.shift();
        utterance.resolve({ startedAtMs: utterance.startedAtMs, endedAtMs: at, durationMs: (utterance.mulaw.length / FRAME_BYTES) * FRAME_MS });
      }
    }
    this.chunk++;
    this.send({
      event: 'media',
      sequenceNumber: this.nextSequence(),
      media: { track: 'inbound', chunk: String(this.chunk), timestamp: String((this.chunk - 1) * FRAME_MS), payload },
      streamSid: this.streamSid,
    });
  }

  private playFrame(perfNow: number, at: number): void {
    const parts: Buffer[] = [];
    let bytes = 0;
    let receivedAtMs = 0;
    while (bytes < FRAME_BYTES && this.playback.length) {
      const head = this.playback[0];
      if (head.kind === 'mark') {
        this.playback.shift();
        this.reachedMarks.push(head.name);
        continue;
      }
      if (!bytes) receivedAtMs = head.receivedAtMs;
      const take = Math.min(FRAME_BYTES - bytes, head.bytes.length - head.offset);
      parts.push(head.bytes.subarray(head.offset, head.offset + take));
      head.offset += take;
      bytes += take;
      if (head.offset >= head.bytes.length) this.playback.shift();
    }
    if (!bytes) return;
    this.bufferedBytes -= bytes;
    this.played.push({ receivedAtMs, playedAtMs: at, mulaw: parts.length === 1 ? Buffer.from(parts[0]) : Buffer.concat(parts) });
    this.playingUntilPerf = perfNow + (bytes / FRAME_BYTES) * this.frameMs;
  }

  private echoMarksAtHead(at: number): void {
    while (this.playback[0]?.kind === 'mark') {
      const mark = this.playback.shift() as { kind: 'mark'; name: string };
      this.echoMark(mark.name, at, false);
    }
  }

  private echoMark(name: string, atMs: number, cleared: boolean): void {
    this.marksEchoed.push({ name, atMs, cleared });
    this.send({ event: 'mark', sequenceNumber: this.nextSequence(), streamSid: this.streamSid, mark: { name } });
  }

  // ---- from the gateway ----------------------------------------------------------------------

  private receive(data: Buffer, isBinary: boolean): void {
    const atMs = nowMs();
    if (isBinary) {
      this.protocolErrors.push('binary frame (Media Streams messages are JSON text)');
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
    if (message?.event !== 'media' || this.keepMediaEvents) this.events.push(event);
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
    if (message.streamSid !== this.streamSid) {
      this.protocolErrors.push(`${message.event ?? 'message'} with streamSid ${JSON.stringify(message.streamSid)} (expected ${this.streamSid})`);
      return;
    }
    switch (message.event) {
      case 'media':
        return this.onMedia(message, atMs);
      case 'mark':
        return this.onMark(message, atMs);
      case 'clear':
        return this.onClear(atMs);
      default:
        this.protocolErrors.push(`unknown event ${JSON.stringify(message.event)}`);
    }
  }

  private onMedia(message: any, atMs: number): void {
    const payload = message.media?.payload;
    if (typeof payload !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(payload) || payload.length % 4 !== 0) {
      this.protocolErrors.push('media.payload is not base64');
      return;
    }
    const bytes = Buffer.from(payload, 'base64');
    if (!bytes.length) return;
    this.playback.push({ kind: 'audio', bytes, offset: 0, receivedAtMs: atMs });
    this.bufferedBytes += bytes.length;
  }

  private onMark(message: any, atMs: number): void {
    const name = message.mark?.name;
    if (typeof name !== 'string') {
      this.protocolErrors.push('mark.name is not a string');
      return;
    }
    const idle = this.playback.length === 0 && this.reachedMarks.length === 0 && performance.now() >= this.playingUntilPerf;
    if (idle) this.echoMark(name, atMs, false);
    else this.playback.push({ kind: 'mark', name });
  }

  private onClear(atMs: number): void {
    const dropped = this.bufferedBytes;
    for (const name of this.reachedMarks) this.echoMark(name, atMs, false);
    this.reachedMarks = [];
    for (const item of this.playback) if (item.kind === 'mark') this.echoMark(item.name, atMs, true);
    this.playback.length = 0;
    this.bufferedBytes = 0;
    this.clears.push({ atMs, droppedBytes: dropped });
  }

  // ---- plumbing ------------------------------------------------------------------------------

  private nextSequence(): string {
    return String(++this.sequence);
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

/** Connects a caller to a stream URL and starts streaming (silence until `say`). */
export async function connectTwilioCaller(opts: TwilioCallerOptions): Promise<TwilioCaller> {
  const caller = new TwilioCaller(opts);
  await caller.open();
  return caller;
}
