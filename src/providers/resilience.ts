/**
 * `ResilientStt`: an SttStream that reopens its adapter's stream when the vendor drops it (with
 * the shared `Backoff`, src/shared/backoff.ts), and gives up (event `unavailable`) when the vendor
 * rejects it or keeps failing. Adapters speak their vendor's protocol; they do not decide when to
 * reconnect.
 */
import { EventEmitter } from 'node:events';
import { Backoff } from '../shared/backoff';
import { SpeechProviderError } from './speech-socket';
import type { SttEvents, SttStream } from './stt/types';

export interface ResilientSttOptions {
  /** Opens a fresh vendor stream (the adapter); may throw when the adapter cannot be set up. */
  open(): SttStream;
  delaysMs?: readonly number[];
  healthyMs?: number;
  /** Consecutive failed connections (no transcript, shorter than healthyMs) before giving up. */
  maxFailures?: number;
}

const DEFAULT_MAX_FAILURES = 5;

/**
 * An SttStream that survives vendor drops. Audio sent while it reconnects is dropped (the caller
 * is live; replaying stale audio would only delay the next transcript).
 */
export class ResilientStt extends EventEmitter<SttEvents> implements SttStream {
  readonly ready: Promise<void>;
  private stream: SttStream | null = null;
  private readonly backoff: Backoff;
  private readonly maxFailures: number;
  private timer?: NodeJS.Timeout;
  private closed = false;
  private gaveUp = false;
  private bytesOfClosedStreams = 0;
  private lastError: SpeechProviderError | null = null;
  private closedEmitted = false;
  readonly provider: string;

  constructor(private readonly options: ResilientSttOptions) {
    super();
    this.backoff = new Backoff(options.delaysMs, options.healthyMs);
    this.maxFailures = options.maxFailures ?? DEFAULT_MAX_FAILURES;
    const first = this.open();
    this.provider = first?.provider ?? 'unknown';
    this.ready = first ? first.ready : Promise.reject(this.lastError ?? new Error('STT unavailable'));
    this.ready.catch(() => {});
  }

  get audioBytesSent(): number {
    return this.bytesOfClosedStreams + (this.stream?.audioBytesSent ?? 0);
  }

  /** The current adapter's wait for a final after finalize() (SttStream.finalWaitMs). */
  get finalWaitMs(): number | undefined {
    return this.stream?.finalWaitMs;
  }

  /** The stream gave up for good (see `unavailable`). */
  get isUnavailable(): boolean {
    return this.gaveUp;
  }

  sendAudio(audio: Buffer): void {
    this.stream?.sendAudio(audio);
  }

  finalize(): void {
    this.stream?.finalize();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const stream = this.stream;
    this.stream = null;
    if (stream) await stream.close();
    this.emitClosed({ code: 1000, reason: 'closed' });
  }

  private open(): SttStream | null {
    if (this.closed || this.gaveUp) return null;
    let stream: SttStream;
    try {
      stream = this.options.open();
    } catch (err) {
      const e = err instanceof SpeechProviderError ? err : new SpeechProviderError((err as Error).message, { provider: 'stt', fatal: true });
      this.lastError = e;
      // Deferred so listeners attached right after construction hear it.
      queueMicrotask(() => this.giveUp(e));
      return null;
    }
    this.stream = stream;
    let fatal = false;
    stream.ready.then(
      () => this.backoff.opened(),
      () => {},
    );
    stream.on('transcript', (t) => {
      this.backoff.reset();
      this.emit('transcript', t);
    });
    stream.on('utteranceEnd', (e) => this.emit('utteranceEnd', e));
    stream.on('speechStarted', (e) => this.emit('speechStarted', e));
    stream.on('error', (err) => {
      this.lastError = err;
      if (err.details.fatal) fatal = true;
      this.emit('error', err);
    });
    stream.on('closed', () => {
      if (this.stream !== stream || this.closed) return;
      this.stream = null;
      this.bytesOfClosedStreams += stream.audioBytesSent;
      this.backoff.closed();
      const why = this.lastError ?? new SpeechProviderError(`${stream.provider} stream closed`, { provider: stream.provider });
      if (fatal) return this.giveUp(why);
      if (this.backoff.attempts >= this.maxFailures) {
        return this.giveUp(new SpeechProviderError(`${why.message} (gave up after ${this.maxFailures} reconnects)`, { ...why.details, fatal: true }));
      }
      this.timer = setTimeout(() => this.open(), this.backoff.next());
      this.timer.unref();
    });
    return stream;
  }

  private giveUp(err: SpeechProviderError): void {
    if (this.gaveUp || this.closed) return;
    this.gaveUp = true;
    this.emit('unavailable', err);
    this.emitClosed({ code: 1011, reason: err.message });
  }

  private emitClosed(info: { code: number; reason: string }): void {
    if (this.closedEmitted) return;
    this.closedEmitted = true;
    this.emit('closed', info);
  }
}
