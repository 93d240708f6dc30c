/**
 * An answering machine's beep: one steady tone (400–2000 Hz) for at least ~200 ms. Speech never
 * holds one frequency that long with nearly all of its energy in it; noise has no peak at all.
 *
 * Audio is cut into 20 ms blocks. Per block: the energy, then a Goertzel scan of 50 Hz steps over
 * the band, refined around the best step to within ~6 Hz (a tone between two steps keeps only 40 %
 * of its energy in either; refined, 95 %). `concentration` = the power at that frequency over the
 * block's energy (1.0 for a pure tone). A block is tonal when it is loud enough and concentrated;
 * consecutive tonal blocks within ±`FREQ_TOLERANCE_HZ` of the run's frequency make a tone; a tone
 * of `minMs` is a beep, reported once when found (`beep`) and again when it stops (`beepEnded`).
 * Cost: ~40 Goertzel passes of 160 samples per 20 ms at 8 kHz, about 0.3 M multiply-adds a second.
 */

export interface BeepParams {
  /** Tone band, Hz. */
  minHz: number;
  maxHz: number;
  /** Shortest tone counted as a beep, ms. */
  minMs: number;
  /** Share of a block's energy at the tone's frequency (0..1). */
  minConcentration: number;
  /** Quietest block considered, RMS in 16-bit units (~ −46 dBFS by default). */
  minRms: number;
}

export const DEFAULT_BEEP_PARAMS: BeepParams = { minHz: 400, maxHz: 2000, minMs: 200, minConcentration: 0.6, minRms: 160 };

const BLOCK_MS = 20;
const SCAN_STEP_HZ = 50;
const FREQ_TOLERANCE_HZ = 30;

export interface BeepEvent {
  /** The tone's frequency, Hz. */
  frequencyHz: number;
  /** Where the tone began, ms of audio since the first sample pushed. */
  startMs: number;
  /** `beep`: where it was recognised; `beepEnded`: where it stopped. */
  atMs: number;
  /** Tone length so far (beep) or in all (beepEnded), ms. */
  durationMs: number;
  concentration: number;
}

export interface BeepListener {
  beep?(e: BeepEvent): void;
  beepEnded?(e: BeepEvent): void;
}

/** Power of `x` at `hz` (generalised Goertzel, any frequency), scaled so a pure tone's block gives its energy. */
function goertzelPower(x: Float64Array, hz: number, sampleRate: number): number {
  const w = (2 * Math.PI * hz) / sampleRate;
  const coeff = 2 * Math.cos(w);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < x.length; i++) {
    const s0 = x[i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  return (2 * power) / x.length;
}

/** The strongest frequency of a block in the band and its share of the block's energy. */
export function dominantTone(x: Float64Array, sampleRate: number, minHz: number, maxHz: number): { hz: number; concentration: number } {
  let energy = 0;
  for (let i = 0; i < x.length; i++) energy += x[i]! * x[i]!;
  if (energy === 0) return { hz: 0, concentration: 0 };
  let bestHz = minHz;
  let best = -1;
  for (let hz = minHz; hz <= maxHz; hz += SCAN_STEP_HZ) {
    const p = goertzelPower(x, hz, sampleRate);
    if (p > best) [best, bestHz] = [p, hz];
  }
  for (const step of [SCAN_STEP_HZ / 4, SCAN_STEP_HZ / 8]) {
    const centre = bestHz;
    for (const hz of [centre - 2 * step, centre - step, centre + step, centre + 2 * step]) {
      const p = goertzelPower(x, hz, sampleRate);
      if (p > best) [best, bestHz] = [p, hz];
    }
  }
  return { hz: bestHz, concentration: Math.min(1, best / energy) };
}

export class BeepDetector {
  private readonly block: Float64Array;
  private filled = 0;
  private blocks = 0;
  private run: { startBlock: number; hz: number; blocks: number; concentration: number; reported: boolean } | null = null;

  constructor(
    readonly sampleRate: number,
    private readonly listener: BeepListener,
    readonly params: BeepParams = DEFAULT_BEEP_PARAMS,
  ) {
    this.block = new Float64Array(Math.round((sampleRate * BLOCK_MS) / 1000));
  }

  /** Audio ms pushed so far. */
  get audioMs(): number {
    return (this.blocks * BLOCK_MS) + (this.filled * 1000) / this.sampleRate;
  }

  push(pcm: Int16Array): void {
    for (let i = 0; i < pcm.length; i++) {
      this.block[this.filled++] = pcm[i]!;
      if (this.filled === this.block.length) {
        this.analyse();
        this.filled = 0;
        this.blocks++;
      }
    }
  }

  private analyse(): void {
    const { minHz, maxHz, minConcentration, minRms } = this.params;
    let energy = 0;
    for (let i = 0; i < this.block.length; i++) energy += this.block[i]! * this.block[i]!;
    const rms = Math.sqrt(energy / this.block.length);
    const tone = rms >= minRms ? dominantTone(this.block, this.sampleRate, minHz, maxHz) : null;
    const tonal = tone !== null && tone.concentration >= minConcentration;
    const run = this.run;
    if (tonal && run && Math.abs(tone.hz - run.hz) <= FREQ_TOLERANCE_HZ) {
      run.blocks++;
      run.concentration = Math.min(run.concentration, tone.concentration);
      if (!run.reported && run.blocks * BLOCK_MS >= this.params.minMs) {
        run.reported = true;
        this.listener.beep?.(this.eventOf(run, (this.blocks + 1) * BLOCK_MS));
      }
      return;
    }
    this.endRun();
    if (tonal) this.run = { startBlock: this.blocks, hz: tone.hz, blocks: 1, concentration: tone.concentration, reported: false };
  }

  private endRun(): void {
    const run = this.run;
    this.run = null;
    if (run?.reported) this.listener.beepEnded?.(this.eventOf(run, this.blocks * BLOCK_MS));
  }

  private eventOf(run: NonNullable<BeepDetector['run']>, atMs: number): BeepEvent {
    const startMs = run.startBlock * BLOCK_MS;
    return { frequencyHz: run.hz, startMs, atMs, durationMs: atMs - startMs, concentration: Math.round(run.concentration * 1000) / 1000 };
  }
}
