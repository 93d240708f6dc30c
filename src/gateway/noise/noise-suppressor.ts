/**
 * A call's noise suppression (`pipeline_settings.noise_suppression: "rnnoise"`): the caller's
 * audio, 16-bit PCM at the stream's rate, through RNNoise and back, before the VAD and the STT.
 *
 *   stream rate ─Resampler─▶ 48 kHz ─480-sample frames─▶ RNNoise ─Resampler─▶ stream rate ─▶ VAD, STT
 *
 * RNNoise only runs at 48 kHz on 10 ms frames, so the audio is resampled up once and back down
 * once, with the gateway's own streaming resampler (src/audio/resampler.ts), whatever the stream's
 * rate (8 kHz μ-law phone lines, 16 kHz PCM, …). RNNoise's output lags its input by one frame
 * (10 ms: it overlap-adds 20 ms windows), so the first 10 ms it returns are dropped: denoised sample
 * n is raw sample n, the VAD's times stay on the stream's timeline (barge-in onsets, the arrival
 * clock, the recording all agree). What cannot be taken back is the wait: a denoised sample is
 * ready 10 ms (RNNoise) + the resamplers' lookahead (2 + 2 ms at 8 kHz, 1 + 1 ms at 16 kHz) after
 * the raw one, which the VAD's decisions inherit (docs/media-gateway.md#noise).
 *
 * Frames line up with the stream's chunks: the upsampler holds back its lookahead, so a 20 ms chunk
 * would give 18 ms at 48 kHz, one RNNoise frame and 8 ms waiting for the next chunk — 8 ms more
 * delay on every sample. Starting RNNoise's first frame with the lookahead's length of silence
 * makes every 10 ms multiple (20 ms phone frames, 100 ms chunks) fill whole frames.
 */
import { Resampler } from '../../audio/resampler';
import { createDenoiseState, RNNOISE_FRAME, RNNOISE_RATE, type DenoiseState } from './rnnoise-wasm';

/** RNNoise's own delay: one frame. */
const RNNOISE_DELAY_SECS = RNNOISE_FRAME / RNNOISE_RATE;

export class NoiseSuppressor {
  readonly sampleRate: number;
  private readonly up: Resampler;
  private readonly down: Resampler;
  private state: DenoiseState | null;
  private readonly frame = new Float32Array(RNNOISE_FRAME);
  private filled = 0;
  /** Output samples still to drop at the start (RNNoise's delay, at the stream's rate). */
  private toTrim: number;
  /** RNNoise frames denoised so far. */
  frames = 0;

  constructor(sampleRate: number) {
    this.sampleRate = sampleRate;
    this.up = new Resampler(sampleRate, RNNOISE_RATE);
    this.down = new Resampler(RNNOISE_RATE, sampleRate);
    // The upsampler's lookahead at 48 kHz: what a 10 ms chunk lacks of a whole frame.
    const lookahead = (RNNOISE_FRAME - (new Resampler(sampleRate, RNNOISE_RATE).process(new Int16Array(sampleRate / 100)).length % RNNOISE_FRAME)) % RNNOISE_FRAME;
    this.filled = lookahead;
    this.toTrim = Math.round((RNNOISE_DELAY_SECS + lookahead / RNNOISE_RATE) * sampleRate);
    this.state = createDenoiseState();
  }

  /**
   * Denoises a chunk of the caller's audio. Returns the denoised audio that is ready: about the
   * chunk's length, less what waits for the next chunk (a partial RNNoise frame, the lookahead).
   * Copies what it keeps: `pcm` may be a reused buffer.
   */
  process(pcm: Int16Array): Int16Array {
    const state = this.state;
    if (!state || pcm.length === 0) return new Int16Array(0);
    const high = this.up.process(pcm);
    const whole = Math.floor((this.filled + high.length) / RNNOISE_FRAME);
    const denoised = new Int16Array(whole * RNNOISE_FRAME);
    let written = 0;
    const frame = this.frame;
    for (let i = 0; i < high.length; i++) {
      frame[this.filled++] = high[i]!;
      if (this.filled < RNNOISE_FRAME) continue;
      state.processFrame(frame);
      this.frames++;
      for (let j = 0; j < RNNOISE_FRAME; j++) {
        const v = Math.round(frame[j]!);
        denoised[written++] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
      }
      this.filled = 0;
    }
    const out = whole > 0 ? this.down.process(denoised) : new Int16Array(0);
    if (this.toTrim === 0) return out;
    const drop = Math.min(this.toTrim, out.length);
    this.toTrim -= drop;
    return out.subarray(drop);
  }

  /** Frees the call's RNNoise state (the call ended). Safe to call twice. */
  close(): void {
    this.state?.destroy();
    this.state = null;
  }
}
