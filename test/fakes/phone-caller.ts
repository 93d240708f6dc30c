/**
 * A simulated phone caller on a telephony vendor's media stream, for any vendor: a small
 * per-vendor wire adapter (CallerWire: the vendor's message shapes and audio format) plus this
 * vendor-neutral phone. It opens the stream WebSocket the way the vendor does, sends the caller's
 * audio in the vendor's format and frame size in real time, and plays the agent's audio back like
 * the vendor: buffered, at real-time rate; a mark/checkpoint is reported once the audio queued
 * before it has played; `clear` drops what is buffered (and, for vendors that do, reports pending
 * marks at once).
 *
 * Everything is recorded with wall-clock times (epoch ms, sub-millisecond) so tests can assert
 * what the caller heard and when. All callers share one 20 ms timer, so a process can hold many.
 */
import WebSocket from 'ws';
import { bytesForMs, fromPcm16, silence, silenceByte, toPcm16, type AudioFormat } from '../../src/audio/format';
import { detectDtmf } from '../../src/audio/dtmf';
import type { Pacer, Paced } from '../../src/gateway/speech/pacer';
import { clockFor } from './caller-clock';
import {
  FRAME_MS,
  SPEECH_PEAK,
  loadSpeechWav,
  nowMs,
  pcmPeak,
  type CallerWire,
  type CloseInfo,
  type EchoedMark,
  type PhoneCallerOptions,
  type PlayedFrame,
  type ReceivedEvent,
  type SpeechSpan,
} from './phone-wire';

export * from './phone-wire';

// After a stall a caller sends at most this many overdue ticks at once (a bounded burst).
const MAX_CATCH_UP_TICKS = 10;

type PlaybackItem = { kind: 'audio'; bytes: Buffer; offset: number; receivedAtMs: number } | { kind: 'mark'; name: string };

interface Utterance {
  audio: Buffer;
  offset: number;
  startedAtMs?: number;
  sentAtMs: number[];
  resolve(span: SpeechSpan): void;
}

/** A played frame's audio when media is not kept (PhoneCallerOptions.keepMediaEvents). */
const NO_AUDIO = Buffer.alloc(0);

export class PhoneCaller implements Paced {
  readonly url: string;
  readonly format: AudioFormat;
  /** Every message received from the gateway, in order. */
  readonly events: ReceivedEvent[] = [];
  /** Every 20 ms frame of agent audio played to the caller. */
  readonly played: PlayedFrame[] = [];
  readonly marksEchoed: EchoedMark[] = [];
  readonly clears: Array<{ atMs: number; droppedBytes: number }> = [];
  readonly dtmfSent: Array<{ digit: string; atMs: number }> = [];
  /** Messages from the gateway the vendor would reject (bad JSON, wrong stream id, …). */
  readonly protocolErrors: string[] = [];
  /** Resolves when the socket has closed, whichever side closed it. */
  readonly closed: Promise<CloseInfo>;
  connectedAtMs = 0;

  protected ws!: WebSocket;
  private readonly clock: Pacer;
  private readonly tickMs: number;
  private readonly ticksPerMessage: number;
  private readonly playBytes: number;
  private readonly keepMediaEvents: boolean;
  /** One message of silence and a decode buffer, reused: 50 allocations a second per caller add up to the callers' GC pauses. */
  private readonly silenceMessage: Buffer;
  private readonly peakScratch = new Int16Array(4096);
  private startedPerf = 0;
  private ticksDone = 0;
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

  constructor(
    url: string,
    protected readonly wire: CallerWire,
    opts: PhoneCallerOptions = {},
  ) {
    this.url = url;
    this.format = wire.format;
    const speed = opts.speed ?? 1;
    this.clock = clockFor(speed);
    this.tickMs = FRAME_MS / speed;
    this.ticksPerMessage = Math.max(1, Math.round(wire.frameMs / FRAME_MS));
    this.playBytes = bytesForMs(wire.format, FRAME_MS);
    this.keepMediaEvents = opts.keepMediaEvents ?? true;
    this.silenceMessage = silence(wire.format, wire.frameMs);
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
  }

  /** Opens the socket and sends the vendor's opening messages; rejects if the handshake fails. */
  open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url, { headers: this.wire.headers(this.url), perMessageDeflate: false });
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
        for (const m of this.wire.opening()) this.send(m);
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
   * Speaks: queues PCM at the stream's rate (or a WAV file path, converted) after anything
   * already queued. Resolves when the last frame has been sent.
   */
  say(audio: Int16Array | string): Promise<SpeechSpan> {
    const pcm = typeof audio === 'string' ? loadSpeechWav(audio, this.format.sampleRate) : audio;
    const messageBytes = bytesForMs(this.format, this.wire.frameMs);
    const encoded = fromPcm16(pcm, this.format);
    const messages = Math.max(1, Math.ceil(encoded.length / messageBytes));
    const full = Buffer.alloc(messages * messageBytes, silenceByte(this.format));
    encoded.copy(full);
    return new Promise((resolve) => this.speech.push({ audio: full, offset: 0, sentAtMs: [], resolve }));
  }

  /** Presses a key. */
  dtmf(digit: string): void {
    if (!/^[0-9*#]$/.test(digit)) throw new Error(`not a DTMF digit: ${digit}`);
    this.dtmfSent.push({ digit, atMs: nowMs() });
    this.send(this.wire.dtmf(digit));
  }

  /** The caller hangs up: the vendor's stop message (if it has one), then the socket closes. */
  async hangup(): Promise<CloseInfo> {
    if (this.ws.readyState === WebSocket.OPEN && !this.hangingUp) {
      const stop = this.wire.stop();
      if (stop) this.send(stop);
      this.hangingUp = true;
      this.ws.close(1000);
    }
    return this.closed;
  }

  /** Drops the connection without a goodbye (a network failure). */
  drop(): void {
    this.hangingUp = true;
    this.ws.terminate();
  }

  /** Decoded 16-bit PCM of all agent audio played so far, back to back. */
  heardAudio(): Int16Array {
    const parts = this.played.map((f) => toPcm16(f.audio, this.format));
    const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }

  /**
   * The keys pressed in the agent's audio so far (DTMF tones decoded with Goertzel, as an IVR
   * hears them): how a test checks what send_dtmf sent, whatever the vendor's audio format.
   */
  heardDigits(): string {
    return detectDtmf(this.heardAudio(), this.format.sampleRate)
      .map((d) => d.digit)
      .join('');
  }

  /** Played frames that carry sound (peak above SPEECH_PEAK), e.g. to check the greeting was audio. */
  speechFrames(peak = SPEECH_PEAK): PlayedFrame[] {
    return this.played.filter((f) => f.peak > peak);
  }

  /** When the message carrying `offsetMs` of an utterance left: later than its turn if this process stalled. */
  sentAtOffset(span: SpeechSpan, offsetMs: number): number {
    return span.sentAtMs[Math.floor(offsetMs / this.wire.frameMs)] ?? span.startedAtMs + offsetMs;
  }

  /** Milliseconds of agent audio received but not yet played. */
  bufferedMs(): number {
    return (this.bufferedBytes / this.playBytes) * FRAME_MS;
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
    if (this.ws.readyState !== WebSocket.OPEN || this.hangingUp) return true;
    const due = Math.floor((perfNow - this.startedPerf) / this.tickMs) + 1;
    for (let n = 0; this.ticksDone < due && n < MAX_CATCH_UP_TICKS; n++) {
      this.ticksDone++;
      this.step(perfNow);
    }
    return true;
  }

  private step(perfNow: number): void {
    const at = nowMs();
    const dueAtMs = performance.timeOrigin + this.startedPerf + (this.ticksDone - 1) * this.tickMs;
    // Marks reached during the previous frame: its audio has now finished playing.
    for (const name of this.reachedMarks) this.echoMark(name, at, false);
    this.reachedMarks = [];
    this.echoMarksAtHead(at);
    if ((this.ticksDone - 1) % this.ticksPerMessage === 0) this.sendMedia(at);
    this.playFrame(perfNow, at, dueAtMs);
  }

  private sendMedia(at: number): void {
    const messageBytes = bytesForMs(this.format, this.wire.frameMs);
    let audio: Buffer;
    const utterance = this.speech[0];
    if (utterance) {
      if (utterance.startedAtMs === undefined) utterance.startedAtMs = at;
      utterance.sentAtMs.push(at);
      audio = utterance.audio.subarray(utterance.offset, utterance.offset + messageBytes);
      utterance.offset += messageBytes;
      if (utterance.offset >= utterance.audio.length) {
        this.speech.shift();
        const durationMs = (utterance.audio.length / messageBytes) * this.wire.frameMs;
        utterance.resolve({ startedAtMs: utterance.startedAtMs, sentAtMs: utterance.sentAtMs, endedAtMs: at, durationMs, messageMs: this.wire.frameMs });
      }
    } else {
      audio = this.silenceMessage;
    }
    this.send(this.wire.media(audio, ++this.chunk));
  }

  private playFrame(perfNow: number, at: number, dueAtMs: number): void {
    const parts: Buffer[] = [];
    let bytes = 0;
    let receivedAtMs = 0;
    while (bytes < this.playBytes && this.playback.length) {
      const head = this.playback[0]!;
      if (head.kind === 'mark') {
        this.playback.shift();
        this.reachedMarks.push(head.name);
        continue;
      }
      if (!bytes) receivedAtMs = head.receivedAtMs;
      const take = Math.min(this.playBytes - bytes, head.bytes.length - head.offset);
      parts.push(head.bytes.subarray(head.offset, head.offset + take));
      head.offset += take;
      bytes += take;
      if (head.offset >= head.bytes.length) this.playback.shift();
    }
    if (!bytes) return;
    this.bufferedBytes -= bytes;
    const audio = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    const peak = pcmPeak(toPcm16(audio, this.format, audio.length <= this.peakScratch.length ? this.peakScratch : undefined));
    this.played.push({ receivedAtMs, playedAtMs: at, dueAtMs, audio: this.keepMediaEvents ? Buffer.from(audio) : NO_AUDIO, peak });
    this.playingUntilPerf = perfNow + (bytes / this.playBytes) * this.tickMs;
  }

  private echoMarksAtHead(at: number): void {
    while (this.playback[0]?.kind === 'mark') {
      const mark = this.playback.shift() as { kind: 'mark'; name: string };
      this.echoMark(mark.name, at, false);
    }
  }

  private echoMark(name: string, atMs: number, cleared: boolean): void {
    this.marksEchoed.push({ name, atMs, cleared });
    this.send(this.wire.markPlayed(name));
  }

  // ---- from the gateway ----------------------------------------------------------------------

  private receive(data: Buffer, isBinary: boolean): void {
    const atMs = nowMs();
    if (isBinary && !this.wire.readBinary) return void this.protocolErrors.push('binary frame (media stream messages are JSON text)');
    let message: any = { binary: data.length };
    if (!isBinary) {
      try {
        message = JSON.parse(data.toString('utf8'));
      } catch {
        return void this.protocolErrors.push(`invalid JSON: ${data.toString('utf8').slice(0, 80)}`);
      }
    }
    const event: ReceivedEvent = { atMs, message };
    const action = isBinary ? this.wire.readBinary!(data) : this.wire.read(message);
    if (action.kind !== 'media' || this.keepMediaEvents) this.events.push(event);
    for (const w of [...this.waiters]) {
      if (w.test(event)) {
        this.waiters.delete(w);
        w.resolve(event);
      }
    }
    switch (action.kind) {
      case 'error':
        this.protocolErrors.push(action.error);
        return;
      case 'media':
        if (!action.audio.length) return;
        this.playback.push({ kind: 'audio', bytes: action.audio, offset: 0, receivedAtMs: atMs });
        this.bufferedBytes += action.audio.length;
        return;
      case 'mark': {
        const idle = this.playback.length === 0 && this.reachedMarks.length === 0 && performance.now() >= this.playingUntilPerf;
        if (idle) this.echoMark(action.name, atMs, false);
        else this.playback.push({ kind: 'mark', name: action.name });
        return;
      }
      case 'clear':
        return this.onClear(atMs);
    }
  }

  private onClear(atMs: number): void {
    const dropped = this.bufferedBytes;
    for (const name of this.reachedMarks) this.echoMark(name, atMs, false);
    this.reachedMarks = [];
    if (this.wire.echoMarksOnClear) for (const item of this.playback) if (item.kind === 'mark') this.echoMark(item.name, atMs, true);
    this.playback.length = 0;
    this.bufferedBytes = 0;
    this.clears.push({ atMs, droppedBytes: dropped });
    const confirmation = this.wire.cleared();
    if (confirmation) this.send(confirmation);
  }

  // ---- plumbing ------------------------------------------------------------------------------

  protected send(message: object | Buffer): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(Buffer.isBuffer(message) ? message : JSON.stringify(message));
  }

  private onClose(code: number): void {
    this.clock.remove(this);
    if (this.closeInfo) return;
    this.closeInfo = { by: this.hangingUp ? 'caller' : 'gateway', code, atMs: nowMs() };
    for (const u of this.speech.splice(0)) {
      const start = u.startedAtMs ?? this.closeInfo.atMs;
      u.resolve({ startedAtMs: start, sentAtMs: u.sentAtMs, endedAtMs: this.closeInfo.atMs, durationMs: this.closeInfo.atMs - start, messageMs: this.wire.frameMs });
    }
    this.resolveClosed(this.closeInfo);
  }
}
