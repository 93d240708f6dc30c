/**
 * Silero VAD v5 on onnxruntime-node. One InferenceSession (loaded once, ~2 MB model, single
 * intra-op thread so 50 calls do not fight over cores) is shared by every call; each call gets a
 * `SileroStream` holding its own recurrent state and audio context.
 *
 * The stream follows the official silero-vad `OnnxWrapper` (which Pipecat's SileroOnnxModel
 * copies): at 8 kHz the model takes 256-sample windows (32 ms), each prefixed with the last 32
 * samples of the previous window (64/512 at 16 kHz), as float32 in [-1, 1); state [2, 1, 128]
 * carries over from window to window. Unlike Pipecat we do not reset the state every 5 s of
 * wall-clock time: that was a workaround for memory growth in the PyTorch model, the ONNX state
 * is fixed-size, and resets make detection depend on timing rather than audio.
 */
import * as ort from 'onnxruntime-node';

/** What the VAD state machine needs from a model: the speech probability of consecutive windows. */
export interface SpeechProbability {
  readonly sampleRate: number;
  readonly windowSamples: number;
  /**
   * Probability (0..1) that the next window of exactly `windowSamples` floats in [-1, 1) is
   * speech. Windows must be consecutive audio and analysed one at a time; the window is copied
   * before this returns, so the caller may reuse its buffer.
   */
  probability(window: Float32Array): Promise<number>;
  /**
   * The probabilities of several consecutive windows (a multiple of `windowSamples` floats) in one
   * request; what a model that batches does best. Optional: without it windows go one at a time.
   */
  probabilities?(windows: Float32Array): Promise<Float32Array>;
  /** Forgets the audio seen so far (a new, unrelated stream follows). */
  reset(): void;
}

import { CONTEXT as CONTEXT_SAMPLES, WINDOW as WINDOW_SAMPLES, type SileroSampleRate } from './silero-passes';

export type { SileroSampleRate };
const STATE_DIMS = [2, 1, 128];
const STATE_SIZE = 2 * 128;

export function defaultSileroModelPath(): string {
  return require.resolve('@ricky0123/vad-web/dist/silero_vad_v5.onnx');
}

export class SileroVadModel {
  private readonly sampleRateTensors = new Map<number, ort.Tensor>();

  private constructor(readonly session: ort.InferenceSession) {}

  static async load(modelPath = defaultSileroModelPath()): Promise<SileroVadModel> {
    const session = await ort.InferenceSession.create(modelPath, {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all',
    });
    return new SileroVadModel(session);
  }

  createStream(sampleRate: SileroSampleRate = 8000): SileroStream {
    if (!(sampleRate in WINDOW_SAMPLES)) throw new RangeError(`Silero VAD runs at 8000 or 16000 Hz, not ${sampleRate}`);
    let sr = this.sampleRateTensors.get(sampleRate);
    if (!sr) {
      sr = new ort.Tensor('int64', BigInt64Array.from([BigInt(sampleRate)]), []);
      this.sampleRateTensors.set(sampleRate, sr);
    }
    return new SileroStream(this.session, sampleRate, sr);
  }
}

let shared: Promise<SileroVadModel> | null = null;

/** The process-wide model, loaded on first use (a failed load is retried on the next call). */
export function sharedSileroModel(): Promise<SileroVadModel> {
  shared ??= SileroVadModel.load().catch((err) => {
    shared = null;
    throw err;
  });
  return shared;
}

/**
 * One call's view of the model. Per-window work allocates nothing of size: the input buffer,
 * the two state buffers (used alternately as input and pre-allocated output) and the output
 * buffer are reused. Memory: ~3.5 KB per stream.
 */
export class SileroStream implements SpeechProbability {
  readonly windowSamples: number;
  private readonly contextSamples: number;
  private readonly input: Float32Array;
  private readonly feeds: Record<string, ort.Tensor>;
  private readonly fetches: Record<string, ort.Tensor>;
  private stateIn: ort.Tensor;
  private stateOut: ort.Tensor;
  private busy = false;

  constructor(
    private readonly session: ort.InferenceSession,
    readonly sampleRate: SileroSampleRate,
    sr: ort.Tensor,
  ) {
    this.windowSamples = WINDOW_SAMPLES[sampleRate];
    this.contextSamples = CONTEXT_SAMPLES[sampleRate];
    this.input = new Float32Array(this.contextSamples + this.windowSamples);
    this.stateIn = new ort.Tensor('float32', new Float32Array(STATE_SIZE), STATE_DIMS);
    this.stateOut = new ort.Tensor('float32', new Float32Array(STATE_SIZE), STATE_DIMS);
    this.feeds = { input: new ort.Tensor('float32', this.input, [1, this.input.length]), state: this.stateIn, sr };
    this.fetches = { output: new ort.Tensor('float32', new Float32Array(1), [1, 1]), stateN: this.stateOut };
  }

  async probability(window: Float32Array): Promise<number> {
    if (window.length !== this.windowSamples) {
      throw new RangeError(`Silero at ${this.sampleRate} Hz takes ${this.windowSamples}-sample windows, got ${window.length}`);
    }
    if (this.busy) throw new Error('SileroStream: windows must be analysed one at a time');
    this.busy = true;
    this.input.set(window, this.contextSamples);
    this.feeds.state = this.stateIn;
    this.fetches.stateN = this.stateOut;
    try {
      const out = await this.session.run(this.feeds, this.fetches);
      const p = (out.output.data as Float32Array)[0];
      [this.stateIn, this.stateOut] = [this.stateOut, this.stateIn];
      // The next window's context is the tail of this one.
      this.input.copyWithin(0, this.input.length - this.contextSamples);
      return p;
    } catch (err) {
      if (/tensor's data must be type of/.test((err as Error).message)) {
        // Only seen under jest: its sandbox has its own typed-array constructors.
        throw new Error(`${(err as Error).message} (under jest use test/support/shared-typed-arrays-environment.js)`);
      }
      throw err;
    } finally {
      this.busy = false;
    }
  }

  reset(): void {
    (this.stateIn.data as Float32Array).fill(0);
    this.input.fill(0);
  }
}
