/**
 * Voice activity detection with Pipecat's semantics (`VADAnalyzer.analyze_audio`), on top of any
 * `SpeechProbability` model (Silero in production, scripted probabilities in tests).
 *
 * Audio is cut into model windows (256 samples = 32 ms at 8 kHz). A window counts as speech when
 * the model's confidence ≥ `confidence` AND the smoothed volume ≥ `min_volume` (see volume.ts).
 * States go QUIET → STARTING → SPEAKING → STOPPING → QUIET:
 *   - QUIET + speech window → STARTING; a non-speech window in STARTING → back to QUIET;
 *   - SPEAKING once round(start_secs / 32 ms) consecutive speech windows were seen;
 *   - SPEAKING + non-speech window → STOPPING; a speech window in STOPPING → back to SPEAKING;
 *   - QUIET once round(stop_secs / 32 ms) consecutive non-speech windows were seen.
 * Window counts round half to even, like Python's round(): 0.2 s → 6 windows (192 ms).
 * One difference from Pipecat: the start/stop thresholds are checked after every window rather
 * than once per pushed buffer; with 20 ms pushes that is the same thing, with large pushes it
 * does not let a long buffer hide a transition.
 *
 * Events carry audio time in ms since the first sample pushed: `speech_started.at_ms` is where
 * the speech began (the first window of the STARTING run), `speech_stopped.at_ms` where it ended
 * (the end of the last speech window, before the stop_secs tail); `detected_at_ms` is the audio
 * time at which the analyzer decided (end of the deciding window).
 */
import { createLogger } from '../../shared/logger';
import type { PipelineSettings } from '../../shared/catalog';
import type { SpeechProbability } from './silero';
import { windowVolume } from './volume';

const log = createLogger('vad');

export interface VadParams {
  /** Minimum model confidence (0..1) for a window to count as speech. */
  confidence: number;
  /** Seconds of continuous speech before SPEAKING. */
  start_secs: number;
  /** Seconds of continuous non-speech before QUIET. */
  stop_secs: number;
  /** Minimum smoothed volume (0..1, see volume.ts) for a window to count as speech. */
  min_volume: number;
}

/** The platform's defaults (the spec's pipeline_settings), not Pipecat's (0.7 / 0.2 / 0.8 / 0.6). */
export const DEFAULT_VAD_PARAMS: VadParams = { confidence: 0.5, start_secs: 0.2, stop_secs: 0.2, min_volume: 0.4 };

export function vadParamsFromPipeline(settings: Partial<PipelineSettings>): VadParams {
  return {
    confidence: settings.vad_confidence ?? DEFAULT_VAD_PARAMS.confidence,
    start_secs: settings.vad_start_secs ?? DEFAULT_VAD_PARAMS.start_secs,
    stop_secs: settings.vad_stop_secs ?? DEFAULT_VAD_PARAMS.stop_secs,
    min_volume: settings.vad_min_volume ?? DEFAULT_VAD_PARAMS.min_volume,
  };
}

export type VadState = 'quiet' | 'starting' | 'speaking' | 'stopping';

export interface VadEvent {
  type: 'speech_started' | 'speech_stopped';
  /** Where the speech began (started) or ended (stopped), ms of audio since the first sample. */
  at_ms: number;
  /** When the analyzer decided, ms of audio since the first sample. */
  detected_at_ms: number;
}

/** Pipecat's volume smoothing factor (exp_smoothing with 0.2: new = prev + 0.2·(v − prev)). */
const VOLUME_SMOOTHING = 0.2;

function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

export class VadAnalyzer {
  readonly params: VadParams;
  readonly sampleRate: number;
  readonly windowSamples: number;
  private readonly startWindows: number;
  private readonly stopWindows: number;

  private vadState: VadState = 'quiet';
  private startingCount = 0;
  private stoppingCount = 0;
  private runStartWindow = 0;
  private prevVolume = 0;
  /** Windows analysed so far; window i covers samples [i·W, (i+1)·W). */
  private windowsDone = 0;

  private pending: Float32Array;
  private pendingLen = 0;
  /** The windows of the request being analysed (grows to the largest backlog seen). */
  private windows: Float32Array;
  private volumes = new Float64Array(4);
  private running: Promise<void> | null = null;
  private readonly listeners = new Set<(e: VadEvent) => void>();
  private modelFailed = false;

  /** The last window's model confidence and smoothed volume (diagnostics). */
  lastConfidence = 0;
  lastVolume = 0;

  constructor(
    private readonly model: SpeechProbability,
    params: Partial<VadParams> = {},
    onEvent?: (event: VadEvent) => void,
  ) {
    this.params = { ...DEFAULT_VAD_PARAMS, ...params };
    for (const key of ['confidence', 'min_volume'] as const) {
      const v = this.params[key];
      if (!(v >= 0 && v <= 1)) throw new RangeError(`${key} must be between 0 and 1 (got ${v})`);
    }
    for (const key of ['start_secs', 'stop_secs'] as const) {
      const v = this.params[key];
      if (!(v >= 0 && Number.isFinite(v))) throw new RangeError(`${key} must be a non-negative number (got ${v})`);
    }
    this.sampleRate = model.sampleRate;
    this.windowSamples = model.windowSamples;
    const windowSecs = this.windowSamples / this.sampleRate;
    this.startWindows = roundHalfEven(this.params.start_secs / windowSecs);
    this.stopWindows = roundHalfEven(this.params.stop_secs / windowSecs);
    this.windows = new Float32Array(this.windowSamples * 4);
    this.pending = new Float32Array(this.windowSamples * 4);
    if (onEvent) this.listeners.add(onEvent);
  }

  get state(): VadState {
    return this.vadState;
  }

  /** True while the user is considered to be speaking (SPEAKING or STOPPING). */
  get speaking(): boolean {
    return this.vadState === 'speaking' || this.vadState === 'stopping';
  }

  onEvent(listener: (event: VadEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Queues PCM (any length, at the model's rate); it is copied, so the caller may reuse it. */
  push(pcm: Int16Array): void {
    const needed = this.pendingLen + pcm.length;
    if (needed > this.pending.length) {
      const grown = new Float32Array(Math.max(needed, this.pending.length * 2));
      grown.set(this.pending.subarray(0, this.pendingLen));
      this.pending = grown;
    }
    const p = this.pending;
    for (let i = 0, j = this.pendingLen; i < pcm.length; i++, j++) p[j] = pcm[i] / 32768;
    this.pendingLen = needed;
    this.kick();
  }

  /** Resolves when every complete window pushed so far has been analysed. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** push + idle, returning the events the pushed audio produced. */
  async analyze(pcm: Int16Array): Promise<VadEvent[]> {
    const events: VadEvent[] = [];
    const off = this.onEvent((e) => events.push(e));
    try {
      this.push(pcm);
      await this.idle();
    } finally {
      off();
    }
    return events;
  }

  private kick(): void {
    if (this.running || this.pendingLen < this.windowSamples) return;
    this.running = this.drain().finally(() => {
      this.running = null;
      this.kick();
    });
  }

  private async drain(): Promise<void> {
    const w = this.windowSamples;
    while (this.pendingLen >= w) {
      // Every complete window at once: a model that batches (silero-batch.ts) analyses them in one
      // job, so a 100 ms chunk or a backlog after a stall is not one event-loop round trip per window.
      const n = this.model.probabilities ? Math.floor(this.pendingLen / w) : 1;
      if (this.windows.length < n * w) this.windows = new Float32Array(n * w);
      const windows = this.windows.subarray(0, n * w);
      windows.set(this.pending.subarray(0, n * w));
      this.pending.copyWithin(0, n * w, this.pendingLen);
      this.pendingLen -= n * w;

      // Volumes first: the window buffer is ours again once the model call returns its promise.
      if (this.volumes.length < n) this.volumes = new Float64Array(n);
      for (let k = 0; k < n; k++) {
        const v = windowVolume(windows.subarray(k * w, (k + 1) * w), this.sampleRate, 32768);
        this.prevVolume += VOLUME_SMOOTHING * (v - this.prevVolume);
        this.volumes[k] = this.prevVolume;
      }
      let confidences: ArrayLike<number> | null = null;
      try {
        confidences = this.model.probabilities ? await this.model.probabilities(windows) : [await this.model.probability(windows)];
      } catch (err) {
        // Like Pipecat: a failing model reads as silence rather than ending the call.
        if (!this.modelFailed) log.error('VAD model failed; treating audio as non-speech', { error: (err as Error).message });
        this.modelFailed = true;
      }
      for (let k = 0; k < n; k++) {
        const confidence = confidences?.[k] ?? 0;
        this.lastConfidence = confidence;
        this.lastVolume = this.volumes[k]!;
        this.step(confidence >= this.params.confidence && this.volumes[k]! >= this.params.min_volume);
      }
    }
  }

  private step(isSpeech: boolean): void {
    const index = this.windowsDone++;
    if (isSpeech) {
      switch (this.vadState) {
        case 'quiet':
          this.vadState = 'starting';
          this.startingCount = 1;
          this.runStartWindow = index;
          break;
        case 'starting':
          this.startingCount++;
          break;
        case 'stopping':
          this.vadState = 'speaking';
          this.stoppingCount = 0;
          break;
      }
    } else {
      switch (this.vadState) {
        case 'starting':
          this.vadState = 'quiet';
          this.startingCount = 0;
          break;
        case 'speaking':
          this.vadState = 'stopping';
          this.stoppingCount = 1;
          this.runStartWindow = index;
          break;
        case 'stopping':
          this.stoppingCount++;
          break;
      }
    }
    if (this.vadState === 'starting' && this.startingCount >= this.startWindows) {
      this.vadState = 'speaking';
      this.startingCount = 0;
      this.emit('speech_started', this.runStartWindow, index + 1);
    }
    if (this.vadState === 'stopping' && this.stoppingCount >= this.stopWindows) {
      this.vadState = 'quiet';
      this.stoppingCount = 0;
      // A fresh recurrent state per caller turn: carried over from earlier speech, Silero was
      // seen to miss a short first word ("Stop,") of the next turn in some window alignments.
      // Windows analysed in the same request after this one (a backlog) kept the old state; they
      // are the quiet that just ended the turn, and the next request starts fresh.
      this.model.reset();
      this.emit('speech_stopped', this.runStartWindow, index + 1);
    }
  }

  private emit(type: VadEvent['type'], atWindow: number, decidedWindow: number): void {
    const msPerWindow = (this.windowSamples * 1000) / this.sampleRate;
    const event: VadEvent = { type, at_ms: atWindow * msPerWindow, detected_at_ms: decidedWindow * msPerWindow };
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        log.error('VAD event listener failed', { type, error: (err as Error).message });
      }
    }
  }
}
