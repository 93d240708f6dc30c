/**
 * Streaming sample-rate conversion between any two integer rates (8 kHz ↔ 16 kHz for STT
 * providers, 24 kHz → 8 kHz for TTS providers that only speak PCM 24k, …).
 *
 * Choice: a polyphase windowed-sinc FIR (Blackman window, 16 zero crossings each side at the
 * lower rate, cut-off at 90% of the lower Nyquist). Linear interpolation would be shorter but
 * aliases audibly when going down (24k → 8k folds 4–12 kHz into the telephone band) and is
 * muffled going up; this filter is flat to ~3 kHz at 8 kHz, attenuates aliases by ≥55 dB, and
 * costs ~33 multiply-adds per output sample for 8k↔16k. Kernels are built once per rate pair and
 * shared by every call.
 *
 * Output sample n corresponds exactly to input time n·inRate/outRate (no leading filter delay);
 * the price is a lookahead of 16 samples at the lower rate (2 ms at 8 kHz): output for the last
 * few input samples comes out on the next `process` call, or from `flush()` at the end.
 */

const ZERO_CROSSINGS = 16;
const ROLLOFF = 0.9;

interface Kernel {
  up: number; // L
  down: number; // M
  half: number; // half-length of the prototype filter, in samples at the upsampled rate
  taps: number; // taps per phase
  phases: Float32Array[]; // phases[p][k] = h[p + k·L]
}

const kernels = new Map<string, Kernel>();

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

function kernelFor(inRate: number, outRate: number): Kernel {
  const g = gcd(inRate, outRate);
  const up = outRate / g;
  const down = inRate / g;
  const key = `${up}/${down}`;
  const cached = kernels.get(key);
  if (cached) return cached;

  // Prototype low-pass at the upsampled rate L·inRate, cut-off below the lower Nyquist.
  const upsampledRate = up * inRate;
  const lowerRate = Math.min(inRate, outRate);
  const half = Math.ceil((ZERO_CROSSINGS * upsampledRate) / lowerRate);
  const length = 2 * half + 1;
  const cutoff = (ROLLOFF * lowerRate) / 2 / upsampledRate; // cycles per upsampled sample
  const h = new Float64Array(length);
  for (let i = 0; i < length; i++) {
    const x = i - half;
    const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x);
    const w = 0.42 - 0.5 * Math.cos((2 * Math.PI * i) / (length - 1)) + 0.08 * Math.cos((4 * Math.PI * i) / (length - 1));
    h[i] = sinc * w;
  }
  const taps = Math.ceil(length / up);
  const phases: Float32Array[] = [];
  for (let p = 0; p < up; p++) {
    const phase = new Float32Array(taps);
    let sum = 0;
    for (let k = 0; k < taps; k++) {
      const i = p + k * up;
      phase[k] = i < length ? h[i] : 0;
      sum += phase[k];
    }
    // Unity DC gain per phase: no ripple on steady signals.
    for (let k = 0; k < taps; k++) phase[k] /= sum;
    phases.push(phase);
  }
  const kernel = { up, down, half, taps, phases };
  kernels.set(key, kernel);
  return kernel;
}

export class Resampler {
  private readonly kernel: Kernel | null;
  private history: Float32Array;
  private work = new Float32Array(0);
  /** Upsampled-rate position of the next output sample, relative to the next input sample. */
  private pos: number;
  private inTotal = 0;
  private outTotal = 0;

  constructor(
    readonly inRate: number,
    readonly outRate: number,
  ) {
    if (!(Number.isInteger(inRate) && inRate > 0 && Number.isInteger(outRate) && outRate > 0)) {
      throw new RangeError(`sample rates must be positive integers (got ${inRate} → ${outRate})`);
    }
    this.kernel = inRate === outRate ? null : kernelFor(inRate, outRate);
    this.history = new Float32Array(this.kernel ? this.kernel.taps - 1 : 0);
    // Start half a filter in, so output 0 is centred on input 0.
    this.pos = this.kernel ? this.kernel.half : 0;
  }

  process(input: Int16Array): Int16Array {
    this.inTotal += input.length;
    const k = this.kernel;
    if (!k) {
      this.outTotal += input.length;
      return input.slice();
    }
    const { up, down, taps, phases } = k;
    const hist = this.history.length;
    const total = hist + input.length;
    if (this.work.length < total) this.work = new Float32Array(total);
    const work = this.work;
    work.set(this.history, 0);
    for (let i = 0; i < input.length; i++) work[hist + i] = input[i];

    const available = input.length * up; // outputs need pos/L < input.length
    const count = this.pos < available ? Math.ceil((available - this.pos) / down) : 0;
    const out = new Int16Array(count);
    let pos = this.pos;
    for (let n = 0; n < count; n++) {
      const base = hist + Math.floor(pos / up);
      const phase = phases[pos % up];
      let acc = 0;
      for (let t = 0; t < taps; t++) acc += phase[t] * work[base - t];
      const v = Math.round(acc);
      out[n] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
      pos += down;
    }
    this.pos = pos - available;
    this.history.set(work.subarray(total - hist, total));
    this.outTotal += count;
    return out;
  }

  /** The output still owed for the input seen so far (the lookahead tail); resets the stream. */
  flush(): Int16Array {
    const owed = Math.ceil((this.inTotal * this.outRate) / this.inRate) - this.outTotal;
    let tail: Int16Array = new Int16Array(0);
    if (this.kernel && owed > 0) {
      const padding = new Int16Array(Math.ceil(this.kernel.half / this.kernel.up) + this.kernel.taps);
      tail = this.process(padding).subarray(0, owed);
    }
    this.reset();
    return tail;
  }

  reset(): void {
    this.history.fill(0);
    this.pos = this.kernel ? this.kernel.half : 0;
    this.inTotal = 0;
    this.outTotal = 0;
  }
}

/** Converts a whole buffer: ceil(n·outRate/inRate) samples, aligned with the input. */
export function resample(pcm: Int16Array, inRate: number, outRate: number): Int16Array {
  if (inRate === outRate) return pcm.slice();
  const r = new Resampler(inRate, outRate);
  const head = r.process(pcm);
  const tail = r.flush();
  const out = new Int16Array(head.length + tail.length);
  out.set(head, 0);
  out.set(tail, head.length);
  return out;
}
