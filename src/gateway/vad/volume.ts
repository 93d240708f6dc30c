/**
 * The "volume" that Pipecat's VAD compares with `min_volume`, reproduced without pyloudnorm.
 *
 * Pipecat (`calculate_audio_volume`) measures each VAD window with a fresh pyloudnorm Meter
 * whose gating block is the whole window, on the raw int16 sample values (not scaled to ±1):
 * ITU-R BS.1770 K-weighting (a +4 dB high shelf at 1.5 kHz, then a 38 Hz high-pass; both filters
 * start from rest in every window), mean square z, loudness L = -0.691 + 10·log10(z), with the
 * absolute gate (L < -70 → -inf). L is mapped linearly from [-20, 80] to [0, 1] and clamped.
 * The analyzer then smooths it exponentially (factor 0.2) before comparing.
 *
 * What the scale means: a 1 kHz tone of amplitude A (int16 units) reads (20·log10 A − 3 + 20)/100,
 * so A = 10 → 0.37, 100 → 0.57, 1000 → 0.77, 10000 → 0.97; silence = 0. Voiced telephone speech
 * measures 0.6–0.95. vad_min_volume 0.4 thus passes anything above a faint hiss (RMS ≈ 10),
 * Pipecat's default 0.6 needs RMS ≈ 100 (-50 dBFS).
 */

interface Biquad {
  b0: number;
  b1: number;
  b2: number;
  a1: number;
  a2: number;
}

// pyloudnorm's IIRfilter: RBJ cookbook biquads, normalised by a0.
function highShelf(gainDb: number, q: number, fc: number, rate: number): Biquad {
  const A = 10 ** (gainDb / 40);
  const w0 = (2 * Math.PI * fc) / rate;
  const alpha = Math.sin(w0) / (2 * q);
  const cos = Math.cos(w0);
  const sq = 2 * Math.sqrt(A) * alpha;
  const a0 = A + 1 - (A - 1) * cos + sq;
  return {
    b0: (A * (A + 1 + (A - 1) * cos + sq)) / a0,
    b1: (-2 * A * (A - 1 + (A + 1) * cos)) / a0,
    b2: (A * (A + 1 + (A - 1) * cos - sq)) / a0,
    a1: (2 * (A - 1 - (A + 1) * cos)) / a0,
    a2: (A + 1 - (A - 1) * cos - sq) / a0,
  };
}

function highPass(q: number, fc: number, rate: number): Biquad {
  const w0 = (2 * Math.PI * fc) / rate;
  const alpha = Math.sin(w0) / (2 * q);
  const cos = Math.cos(w0);
  const a0 = 1 + alpha;
  return {
    b0: (1 + cos) / 2 / a0,
    b1: -(1 + cos) / a0,
    b2: (1 + cos) / 2 / a0,
    a1: (-2 * cos) / a0,
    a2: (1 - alpha) / a0,
  };
}

const kWeighting = new Map<number, [Biquad, Biquad]>();

function filtersFor(rate: number): [Biquad, Biquad] {
  let f = kWeighting.get(rate);
  if (!f) {
    f = [highShelf(4, 1 / Math.SQRT2, 1500, rate), highPass(0.5, 38, rate)];
    kWeighting.set(rate, f);
  }
  return f;
}

const LOUDNESS_FLOOR = -20;
const LOUDNESS_CEILING = 80;
const ABSOLUTE_GATE = -70;

/** BS.1770 loudness of one window of samples in int16 units (-Infinity when gated). */
export function windowLoudness(samples: ArrayLike<number>, sampleRate: number, scale = 1): number {
  const n = samples.length;
  if (n === 0) return -Infinity;
  const [s, h] = filtersFor(sampleRate);
  // Two cascaded direct-form-I biquads starting from rest, like scipy.signal.lfilter without zi.
  let x1 = 0, x2 = 0, y1 = 0, y2 = 0, z1 = 0, z2 = 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const x = samples[i] * scale;
    const y = s.b0 * x + s.b1 * x1 + s.b2 * x2 - s.a1 * y1 - s.a2 * y2;
    x2 = x1;
    x1 = x;
    const z = h.b0 * y + h.b1 * y1 + h.b2 * y2 - h.a1 * z1 - h.a2 * z2;
    y2 = y1;
    y1 = y;
    z2 = z1;
    z1 = z;
    sum += z * z;
  }
  const loudness = -0.691 + 10 * Math.log10(sum / n);
  return loudness >= ABSOLUTE_GATE ? loudness : -Infinity;
}

/**
 * Pipecat's normalised volume (0..1) of one window. `scale` converts the samples to int16 units
 * (32768 for floats in [-1, 1)).
 */
export function windowVolume(samples: ArrayLike<number>, sampleRate: number, scale = 1): number {
  const loudness = windowLoudness(samples, sampleRate, scale);
  const v = (loudness - LOUDNESS_FLOOR) / (LOUDNESS_CEILING - LOUDNESS_FLOOR);
  return v > 1 ? 1 : v > 0 ? v : 0;
}
