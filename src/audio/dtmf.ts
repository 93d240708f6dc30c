/**
 * DTMF (dual-tone multi-frequency) keypresses as audio, ITU-T Q.23: each key is the sum of one
 * low-group (row) and one high-group (column) sine. `dtmfTones` generates them (send_dtmf plays
 * them into the call's audio when the vendor has no way to send digits that keeps the media
 * stream up, docs/phone-operations.md); `detectDtmf` recognises them with the Goertzel algorithm
 * (tests' fake callers and IVRs decode what the agent sent).
 *
 * Q.24 asks receivers to accept tones of ≥ 40 ms with ≥ 40 ms pauses; common equipment wants
 * more, so tones of 90 ms with 90 ms gaps are sent (well inside what every IVR accepts, and a
 * 4-digit code still takes under a second). Each tone is ramped in and out over 5 ms so μ-law
 * and codecs along the way see no clicks.
 */
import { fromPcm16, type AudioFormat } from './format';
import { DTMF_DIGITS } from '../shared/dtmf-keys';

export { DTMF_DIGITS };

const ROWS = [697, 770, 852, 941] as const;
const COLS = [1209, 1336, 1477, 1633] as const;
const KEYS = ['123A', '456B', '789C', '*0#D'] as const;

export const DTMF_TONE_MS = 90;
export const DTMF_GAP_MS = 90;
export const DTMF_PAUSE_MS = 500;
/** Each of the two sines, as a fraction of full scale (−9 dBFS together: no clipping). */
const AMPLITUDE = 0.35;
const RAMP_MS = 5;

export function dtmfFrequencies(digit: string): [number, number] {
  for (let r = 0; r < 4; r++) {
    const c = KEYS[r]!.indexOf(digit.toUpperCase());
    if (c >= 0) return [ROWS[r]!, COLS[c]!];
  }
  throw new Error(`not a DTMF digit: ${JSON.stringify(digit)}`);
}

export interface DtmfToneOptions {
  toneMs?: number;
  gapMs?: number;
}

/** 16-bit PCM at `sampleRate`: each digit's tone followed by a gap (`w`: a pause). */
export function dtmfPcm(digits: string, sampleRate: number, opts: DtmfToneOptions = {}): Int16Array {
  if (!DTMF_DIGITS.test(digits)) throw new Error(`not DTMF digits: ${JSON.stringify(digits)}`);
  const toneN = Math.round(((opts.toneMs ?? DTMF_TONE_MS) * sampleRate) / 1000);
  const gapN = Math.round(((opts.gapMs ?? DTMF_GAP_MS) * sampleRate) / 1000);
  const pauseN = Math.round((DTMF_PAUSE_MS * sampleRate) / 1000);
  const rampN = Math.max(1, Math.round((RAMP_MS * sampleRate) / 1000));
  const total = [...digits].reduce((n, d) => n + (d === 'w' ? pauseN : toneN + gapN), 0);
  const out = new Int16Array(total);
  let at = 0;
  for (const d of digits) {
    if (d === 'w') {
      at += pauseN;
      continue;
    }
    const [low, high] = dtmfFrequencies(d);
    for (let i = 0; i < toneN; i++) {
      const t = i / sampleRate;
      const ramp = Math.min(1, i / rampN, (toneN - 1 - i) / rampN);
      const v = AMPLITUDE * ramp * (Math.sin(2 * Math.PI * low * t) + Math.sin(2 * Math.PI * high * t));
      out[at + i] = Math.round(v * 32767);
    }
    at += toneN + gapN;
  }
  return out;
}

/** The tones in the call's own audio format (μ-law 8 kHz, or 16-bit PCM at 8 or 16 kHz). */
export function dtmfAudio(digits: string, format: AudioFormat, opts: DtmfToneOptions = {}): Buffer {
  return fromPcm16(dtmfPcm(digits, format.sampleRate, opts), format);
}

/** Goertzel power of `freq` in `pcm[from, from+n)`. */
function goertzel(pcm: Int16Array, from: number, n: number, freq: number, sampleRate: number): number {
  const coeff = 2 * Math.cos((2 * Math.PI * freq) / sampleRate);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < n; i++) {
    const s = pcm[from + i]! / 32768 + coeff * s1 - s2;
    s2 = s1;
    s1 = s;
  }
  return s1 * s1 + s2 * s2 - coeff * s1 * s2;
}

export interface DetectedDigit {
  digit: string;
  /** Where the tone was first seen, in ms from the start of `pcm`. */
  atMs: number;
}

/**
 * The DTMF digits in 16-bit PCM, in order. Analysed in 20 ms blocks: a block holds a digit when
 * its strongest row and column both stand well above the other tones of their group (a voice or
 * music spreads its energy, a key concentrates it), together carry most of the block's energy,
 * and neither group dominates the other by more than the twist standard equipment allows. A digit
 * is reported once per run of blocks (two blocks in a row, ≥ 40 ms), so a held key is one press.
 */
export function detectDtmf(pcm: Int16Array, sampleRate: number): DetectedDigit[] {
  const n = Math.round(sampleRate * 0.02);
  const found: DetectedDigit[] = [];
  let current: string | null = null;
  let run = 0;
  let reported = false;
  for (let from = 0; from + n <= pcm.length; from += n) {
    const digit = blockDigit(pcm, from, n, sampleRate);
    if (digit !== null && digit === current) run++;
    else {
      current = digit;
      run = digit === null ? 0 : 1;
      reported = false;
    }
    if (current !== null && run >= 2 && !reported) {
      reported = true;
      found.push({ digit: current, atMs: ((from - n) / sampleRate) * 1000 });
    }
  }
  return found;
}

function blockDigit(pcm: Int16Array, from: number, n: number, sampleRate: number): string | null {
  let energy = 0;
  for (let i = 0; i < n; i++) energy += (pcm[from + i]! / 32768) ** 2;
  if (energy / n < 1e-4) return null; // below about −40 dBFS: silence or line noise
  const rows = ROWS.map((f) => goertzel(pcm, from, n, f, sampleRate));
  const cols = COLS.map((f) => goertzel(pcm, from, n, f, sampleRate));
  const r = strongest(rows);
  const c = strongest(cols);
  if (r < 0 || c < 0) return null;
  const rowPower = rows[r]!;
  const colPower = cols[c]!;
  // Twist: the two tones within 8 dB of each other.
  if (rowPower > colPower * 6.3 || colPower > rowPower * 6.3) return null;
  // Goertzel power of a full-scale sine is (n/2)²·a²; as a share of the block's energy (n·a²/2)
  // each pure tone scores n/2. Together the pair must hold most of the block's energy.
  const share = (rowPower + colPower) / ((n / 2) * energy);
  if (share < 0.6) return null;
  return KEYS[r]![c]!;
}

/** Index of the largest value if it exceeds every other one of its group 4×, else −1. */
function strongest(powers: number[]): number {
  let best = 0;
  for (let i = 1; i < powers.length; i++) if (powers[i]! > powers[best]!) best = i;
  for (let i = 0; i < powers.length; i++) if (i !== best && powers[i]! * 4 > powers[best]!) return -1;
  return best;
}
