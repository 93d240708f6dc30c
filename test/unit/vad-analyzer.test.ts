import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import type { SpeechProbability } from '../../src/gateway/vad/silero';
import { DEFAULT_VAD_PARAMS, VadAnalyzer, vadParamsFromPipeline, type VadEvent } from '../../src/gateway/vad/vad-analyzer';
import { windowLoudness, windowVolume } from '../../src/gateway/vad/volume';

const W = 256; // samples per window at 8 kHz = 32 ms
const MS = 32;

/** A model whose answer for window i is script(i); records what it was given. */
class ScriptedModel implements SpeechProbability {
  readonly sampleRate = 8000;
  readonly windowSamples = W;
  readonly seen: Float32Array[] = [];
  constructor(private readonly script: (window: number) => number) {}
  async probability(window: Float32Array): Promise<number> {
    this.seen.push(window.slice());
    return this.script(this.seen.length - 1);
  }
  reset(): void {}
}

/** Loud enough for any min_volume below ~0.8: a 440 Hz tone at amplitude 3000. */
function loud(windows: number): Int16Array {
  const out = new Int16Array(windows * W);
  for (let i = 0; i < out.length; i++) out[i] = Math.round(3000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return out;
}

/** speech[i] says whether window i is speech; the model answers 0.9 or 0.1 accordingly. */
async function run(speech: boolean[], params: Partial<typeof DEFAULT_VAD_PARAMS> = {}, chunk = 160): Promise<VadEvent[]> {
  const analyzer = new VadAnalyzer(new ScriptedModel((i) => (speech[i] ? 0.9 : 0.1)), { min_volume: 0, ...params });
  const audio = loud(speech.length);
  const events: VadEvent[] = [];
  for (let i = 0; i < audio.length; i += chunk) events.push(...(await analyzer.analyze(audio.subarray(i, i + chunk))));
  return events;
}

const pattern = (...runs: [boolean, number][]): boolean[] => runs.flatMap(([s, n]) => Array<boolean>(n).fill(s));

describe('VadAnalyzer state machine (Pipecat semantics)', () => {
  it('starts after start_secs of consecutive speech and reports where the speech began', async () => {
    // 0.2 s / 32 ms = 6.25 → 6 windows.
    const events = await run(pattern([false, 10], [true, 20]));
    expect(events).toEqual([{ type: 'speech_started', at_ms: 10 * MS, detected_at_ms: 16 * MS }]);
  });

  it('ignores a burst shorter than start_secs', async () => {
    expect(await run(pattern([false, 5], [true, 5], [false, 5], [true, 4], [false, 10]))).toEqual([]);
  });

  it('stops after stop_secs of non-speech and reports where the speech ended', async () => {
    const events = await run(pattern([true, 10], [false, 10]));
    expect(events).toEqual([
      { type: 'speech_started', at_ms: 0, detected_at_ms: 6 * MS },
      { type: 'speech_stopped', at_ms: 10 * MS, detected_at_ms: 16 * MS },
    ]);
  });

  it('bridges a pause shorter than stop_secs', async () => {
    const events = await run(pattern([true, 10], [false, 5], [true, 10], [false, 10]));
    expect(events.map((e) => [e.type, e.at_ms])).toEqual([
      ['speech_started', 0],
      ['speech_stopped', 25 * MS],
    ]);
  });

  it('scales the windows with start_secs / stop_secs and rounds half to even like Python', async () => {
    // stop_secs 0.8 (Pipecat default) = 25 windows; start_secs 0.016 = 0.5 window → 0: immediate.
    const events = await run(pattern([false, 2], [true, 1], [false, 24], [true, 1], [false, 25]), {
      start_secs: 0.016,
      stop_secs: 0.8,
    });
    expect(events).toEqual([
      { type: 'speech_started', at_ms: 2 * MS, detected_at_ms: 3 * MS },
      { type: 'speech_stopped', at_ms: 28 * MS, detected_at_ms: 53 * MS },
    ]);
    // 0.048 s = 1.5 windows → 2.
    expect(await run(pattern([true, 1], [false, 5]), { start_secs: 0.048 })).toEqual([]);
    expect(await run(pattern([true, 2], [false, 5]), { start_secs: 0.048 })).toEqual([
      { type: 'speech_started', at_ms: 0, detected_at_ms: 2 * MS },
    ]);
  });

  it('counts a window as speech when confidence >= vad_confidence', async () => {
    const at = (p: number, threshold: number) => {
      const analyzer = new VadAnalyzer(new ScriptedModel(() => p), { confidence: threshold, min_volume: 0, start_secs: 0 });
      return analyzer.analyze(loud(2));
    };
    expect(await at(0.5, 0.5)).toHaveLength(1);
    expect(await at(0.49, 0.5)).toHaveLength(0);
    expect(await at(0.95, 0.9)).toHaveLength(1);
  });

  it('gives the same events whatever the size of the pushed chunks', async () => {
    const speech = pattern([false, 7], [true, 12], [false, 3], [true, 9], [false, 8]);
    const reference = await run(speech, {}, 160);
    expect(reference).toHaveLength(2);
    expect(await run(speech, {}, 37)).toEqual(reference);
    expect(await run(speech, {}, 256)).toEqual(reference);
    expect(await run(speech, {}, speech.length * W)).toEqual(reference);
  });

  it('hands the model consecutive 256-sample windows of the audio as floats', async () => {
    const model = new ScriptedModel(() => 0);
    const analyzer = new VadAnalyzer(model);
    const audio = new Int16Array(600);
    for (let i = 0; i < audio.length; i++) audio[i] = i * 10 - 3000;
    analyzer.push(audio.subarray(0, 100));
    analyzer.push(audio.subarray(100));
    await analyzer.idle();
    expect(model.seen).toHaveLength(2); // 88 samples wait for the next window
    expect(model.seen[1][0]).toBe(audio[256] / 32768);
    expect(model.seen[1][255]).toBe(audio[511] / 32768);
  });

  it('treats a failing model as silence instead of throwing', async () => {
    const model: SpeechProbability = {
      sampleRate: 8000,
      windowSamples: W,
      probability: () => Promise.reject(new Error('boom')),
      reset() {},
    };
    const analyzer = new VadAnalyzer(model, { min_volume: 0, start_secs: 0 });
    expect(await analyzer.analyze(loud(3))).toEqual([]);
    expect(analyzer.state).toBe('quiet');
  });

  it('takes its parameters from pipeline_settings and validates them', () => {
    expect(vadParamsFromPipeline(PIPELINE_DEFAULTS)).toEqual({ confidence: 0.5, start_secs: 0.2, stop_secs: 0.2, min_volume: 0.4 });
    expect(vadParamsFromPipeline({ vad_stop_secs: 0.8 })).toEqual({ ...DEFAULT_VAD_PARAMS, stop_secs: 0.8 });
    const model = new ScriptedModel(() => 0);
    expect(() => new VadAnalyzer(model, { confidence: 1.5 })).toThrow(RangeError);
    expect(() => new VadAnalyzer(model, { stop_secs: -1 })).toThrow(RangeError);
  });
});

describe('VAD volume (Pipecat: BS.1770 loudness of the window, -20..80 → 0..1, smoothed)', () => {
  it('reads a 1 kHz tone of amplitude A as (20·log10 A − 3 + 20) / 100', () => {
    for (const a of [10, 100, 1000, 10000]) {
      const tone = new Int16Array(W);
      for (let i = 0; i < W; i++) tone[i] = Math.round(a * Math.sin((2 * Math.PI * 1000 * i) / 8000));
      expect(windowVolume(tone, 8000)).toBeCloseTo((20 * Math.log10(a) - 3.01 + 20) / 100, 2);
    }
  });

  it('reads digital silence as 0 and clamps at 1', () => {
    expect(windowLoudness(new Int16Array(W), 8000)).toBe(-Infinity);
    expect(windowVolume(new Int16Array(W), 8000)).toBe(0);
    expect(windowVolume(new Int16Array(W).map((_, i) => (i % 2 ? 32767 : -32768)), 8000)).toBe(1);
  });

  it('needs the smoothed volume to reach vad_min_volume, so quiet audio never starts speech', async () => {
    const quietTone = new Int16Array(50 * W);
    for (let i = 0; i < quietTone.length; i++) quietTone[i] = Math.round(8 * Math.sin((2 * Math.PI * 300 * i) / 8000));
    const analyzer = new VadAnalyzer(new ScriptedModel(() => 1), { min_volume: 0.4, start_secs: 0 });
    expect(await analyzer.analyze(quietTone)).toEqual([]);
    expect(analyzer.lastVolume).toBeLessThan(0.4);
    expect(analyzer.lastVolume).toBeGreaterThan(0.3);

    // Loud audio after silence: smoothing (v ← v + 0.2·(x − v)) delays the start by a few windows.
    const louder = new VadAnalyzer(new ScriptedModel(() => 1), { min_volume: 0.4, start_secs: 0 });
    const events = await louder.analyze(loud(10));
    const x = windowVolume(loud(1), 8000);
    const windowsNeeded = Math.ceil(Math.log(1 - 0.4 / x) / Math.log(0.8));
    expect(events).toEqual([{ type: 'speech_started', at_ms: (windowsNeeded - 1) * MS, detected_at_ms: windowsNeeded * MS }]);
  });
});
