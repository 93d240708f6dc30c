/**
 * Silero VAD for many calls at once: the windows that are ready at the same moment run as one
 * batched job. For a model this small the per-run overhead dominates: one window costs ~0.15 ms
 * alone, ~0.04 ms in a batch of 10–50. With 50 calls that is ~25% of a core saved.
 *
 * Batching adds no latency: requests are collected until the next `setImmediate` — the audio
 * that arrived in the same event-loop turn — or while the previous job runs. An idle gateway runs
 * jobs of one stream; a busy one (many sockets readable per turn) batches more by itself.
 *
 * A stream brings every complete window it has (VadAnalyzer hands them over together), and the
 * job runs them as consecutive passes (silero-passes.ts): a 100 ms chunk (Exotel's 3 windows), or
 * the backlog after a stall, costs one job, not one event-loop round trip per window — with one
 * window per round trip, a loop turning slower than every 16 ms left the VAD ever further behind
 * the audio, and a barge-in waited for it.
 *
 * The job runs on the VAD thread (silero-thread.ts) or, with GATEWAY_VAD_THREAD=off, here.
 * Each stream keeps its own recurrent state and context exactly like SileroStream (silero.ts).
 * The sample rate is one input for the whole batch, so 8 kHz and 16 kHz streams queue apart.
 */
import { createLogger } from '../../shared/logger';
import type { SileroVadModel, SpeechProbability } from './silero';
import { CONTEXT, STATE, WINDOW, type SileroJob, type SileroJobResult, type SileroSampleRate } from './silero-passes';
import { InlineSilero, type SileroEngine } from './silero-thread';

const log = createLogger('vad');

interface Pending {
  stream: BatchedSileroStream;
  windows: Float32Array;
  resolve: (p: Float32Array) => void;
  reject: (err: Error) => void;
}

/** Batches, windows and passes run, and the time jobs took from their start to their answer. */
export interface SileroBatchStats {
  batches: number;
  windows: number;
  passes: number;
  /** Sum and maximum of job durations (ms): on the VAD thread, what the event loop was spared. */
  jobMsTotal: number;
  jobMsMax: number;
}

export class SileroBatcher {
  private pending: Pending[] = [];
  private scheduled = false;
  private inFlight = false;
  readonly stats: SileroBatchStats = { batches: 0, windows: 0, passes: 0, jobMsTotal: 0, jobMsMax: 0 };

  constructor(readonly engine: SileroEngine) {}

  /** In-process inference on the model's session (GATEWAY_VAD_THREAD=off, tests, tools). */
  static of(model: SileroVadModel): SileroBatcher {
    return new SileroBatcher(new InlineSilero(model.session));
  }

  createStream(sampleRate: SileroSampleRate = 8000): BatchedSileroStream {
    if (!(sampleRate in WINDOW)) throw new RangeError(`Silero VAD runs at 8000 or 16000 Hz, not ${sampleRate}`);
    return new BatchedSileroStream(this, sampleRate);
  }

  close(): Promise<void> {
    return this.engine.close();
  }

  /** @internal `windows`: consecutive windows of the stream (a multiple of its window length). */
  request(stream: BatchedSileroStream, windows: Float32Array): Promise<Float32Array> {
    return new Promise((resolve, reject) => {
      this.pending.push({ stream, windows, resolve, reject });
      if (!this.scheduled && !this.inFlight) {
        this.scheduled = true;
        setImmediate(() => this.run());
      }
    });
  }

  private run(): void {
    this.scheduled = false;
    if (this.inFlight || this.pending.length === 0) return;
    // One rate per job: the rate of the oldest request; the other rate's requests wait for the next.
    const rate = this.pending[0]!.stream.sampleRate;
    const batch = this.pending.filter((p) => p.stream.sampleRate === rate);
    this.pending = batch.length === this.pending.length ? [] : this.pending.filter((p) => p.stream.sampleRate !== rate);
    const W = WINDOW[rate];
    const C = CONTEXT[rate];
    const counts = new Int32Array(batch.length);
    let samples = 0;
    for (let r = 0; r < batch.length; r++) {
      counts[r] = batch[r]!.windows.length / W;
      samples += C + batch[r]!.windows.length;
    }
    // Fresh buffers per job: they are handed over (transferred) to the VAD thread.
    const input = new Float32Array(samples);
    const state = new Float32Array(batch.length * 2 * STATE);
    let at = 0;
    for (let r = 0; r < batch.length; r++) {
      const { stream, windows } = batch[r]!;
      input.set(stream.context, at);
      input.set(windows, at + C);
      at += C + windows.length;
      state.set(stream.state, r * 2 * STATE);
    }
    const job: SileroJob = { rate, counts, input, state };
    this.inFlight = true;
    const startedPerf = performance.now();
    this.engine.run(job).then(
      (result) => {
        this.account(result, performance.now() - startedPerf);
        let p = 0;
        for (let r = 0; r < batch.length; r++) {
          const { stream, windows, resolve } = batch[r]!;
          const n = counts[r]!;
          stream.state.set(result.state.subarray(r * 2 * STATE, (r + 1) * 2 * STATE));
          // The next window's context is the tail of this request's last window.
          stream.context.set(windows.subarray(windows.length - C));
          resolve(result.probs.slice(p, p + n));
          p += n;
        }
        this.next();
      },
      (err: Error) => {
        log.warn('VAD inference failed', { error: err.message, streams: batch.length });
        for (const p of batch) p.reject(err);
        this.next();
      },
    );
  }

  private account(result: SileroJobResult, ms: number): void {
    this.stats.batches++;
    this.stats.windows += result.probs.length;
    this.stats.passes += result.passes;
    this.stats.jobMsTotal += ms;
    this.stats.jobMsMax = Math.max(this.stats.jobMsMax, ms);
  }

  private next(): void {
    this.inFlight = false;
    if (this.pending.length > 0 && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.run());
    }
  }
}

/** One call's Silero state on a shared batcher; same contract as SileroStream. */
export class BatchedSileroStream implements SpeechProbability {
  readonly windowSamples: number;
  /** @internal the last CONTEXT samples analysed */
  readonly context: Float32Array;
  /** @internal recurrent state, [2, 128] */
  readonly state = new Float32Array(2 * STATE);
  private busy = false;

  constructor(
    private readonly batcher: SileroBatcher,
    readonly sampleRate: SileroSampleRate,
  ) {
    this.windowSamples = WINDOW[sampleRate];
    this.context = new Float32Array(CONTEXT[sampleRate]);
  }

  async probability(window: Float32Array): Promise<number> {
    if (window.length !== this.windowSamples) {
      throw new RangeError(`Silero at ${this.sampleRate} Hz takes ${this.windowSamples}-sample windows, got ${window.length}`);
    }
    return (await this.probabilities(window))[0]!;
  }

  async probabilities(windows: Float32Array): Promise<Float32Array> {
    if (windows.length === 0 || windows.length % this.windowSamples !== 0) {
      throw new RangeError(`Silero at ${this.sampleRate} Hz takes whole ${this.windowSamples}-sample windows, got ${windows.length} samples`);
    }
    if (this.busy) throw new Error('BatchedSileroStream: windows must be analysed one request at a time');
    this.busy = true;
    try {
      // Copied: the caller may reuse its buffer as soon as this returns its promise.
      return await this.batcher.request(this, windows.slice());
    } finally {
      this.busy = false;
    }
  }

  reset(): void {
    this.state.fill(0);
    this.context.fill(0);
  }
}
