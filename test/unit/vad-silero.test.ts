/**
 * @jest-environment ./test/support/shared-typed-arrays-environment.js
 */
import path from 'node:path';
import { int16ToFloat32 } from '../../src/audio/pcm';
import { readWavFile } from '../../src/audio/wav';
import { sharedSileroModel, type SileroVadModel } from '../../src/gateway/vad/silero';
import { VadAnalyzer, type VadEvent, type VadParams } from '../../src/gateway/vad/vad-analyzer';

const FIXTURES = path.join(__dirname, '../fixtures/audio');
const TOLERANCE_MS = 150;

let model: SileroVadModel;
beforeAll(async () => {
  model = await sharedSileroModel();
});

function load(name: string): Int16Array {
  const wav = readWavFile(path.join(FIXTURES, name));
  expect(wav).toMatchObject({ sampleRate: 8000, channels: 1 });
  return wav.samples;
}

/** Where the speech really is: first and last 10 ms block above -40 dBFS (RMS 328). */
function energyBounds(pcm: Int16Array): { startMs: number; endMs: number } {
  let start = -1;
  let end = -1;
  for (let i = 0; i + 80 <= pcm.length; i += 80) {
    let sum = 0;
    for (let j = i; j < i + 80; j++) sum += pcm[j] * pcm[j];
    if (Math.sqrt(sum / 80) > 328) {
      if (start < 0) start = i;
      end = i + 80;
    }
  }
  return { startMs: start / 8, endMs: end / 8 };
}

/** Feeds the audio the way the gateway does: 20 ms frames as they arrive. */
async function detect(pcm: Int16Array, params: Partial<VadParams> = {}): Promise<{ events: VadEvent[]; maxConfidence: number }> {
  const analyzer = new VadAnalyzer(model.createStream(), params);
  const events: VadEvent[] = [];
  let maxConfidence = 0;
  for (let i = 0; i < pcm.length; i += 160) {
    events.push(...(await analyzer.analyze(pcm.subarray(i, i + 160))));
    maxConfidence = Math.max(maxConfidence, analyzer.lastConfidence);
  }
  return { events, maxConfidence };
}

describe('Silero VAD v5 + analyzer on real speech', () => {
  it('finds one utterance where the speech is, with the default settings', async () => {
    const pcm = load('hello-appointment.wav');
    const truth = energyBounds(pcm);
    expect(truth.startMs).toBeCloseTo(500, -2); // the fixture has 0.5 s of lead-in
    const { events } = await detect(pcm);
    expect(events.map((e) => e.type)).toEqual(['speech_started', 'speech_stopped']);
    const [started, stopped] = events;
    expect(Math.abs(started.at_ms - truth.startMs)).toBeLessThanOrEqual(TOLERANCE_MS);
    expect(Math.abs(stopped.at_ms - truth.endMs)).toBeLessThanOrEqual(TOLERANCE_MS);
    // Decisions come start_secs / stop_secs (6 windows = 192 ms) after the boundaries.
    expect(started.detected_at_ms - started.at_ms).toBe(192);
    expect(stopped.detected_at_ms - stopped.at_ms).toBe(192);
  });

  it('stays quiet through leading and trailing silence; stop_secs decides whether a pause ends the turn', async () => {
    const pcm = load('silence-speech-silence.wav'); // 2 s, "Stop, wait a second.", 2 s
    const truth = energyBounds(pcm);
    expect(truth.startMs).toBeCloseTo(2000, -2);

    // 0.2 s: the pause after "Stop," (~200 ms) ends a turn.
    const short = (await detect(pcm, { stop_secs: 0.2 })).events;
    expect(short.map((e) => e.type)).toEqual(['speech_started', 'speech_stopped', 'speech_started', 'speech_stopped']);
    // 0.8 s: one turn.
    const long = (await detect(pcm, { stop_secs: 0.8 })).events;
    expect(long.map((e) => e.type)).toEqual(['speech_started', 'speech_stopped']);

    for (const events of [short, long]) {
      expect(Math.abs(events[0].at_ms - truth.startMs)).toBeLessThanOrEqual(TOLERANCE_MS);
      expect(Math.abs(events[events.length - 1].at_ms - truth.endMs)).toBeLessThanOrEqual(TOLERANCE_MS);
    }
  });

  it('detects nothing in silence or in low-level noise', async () => {
    const silence = await detect(new Int16Array(8000 * 3));
    expect(silence.events).toEqual([]);
    expect(silence.maxConfidence).toBeLessThan(0.5);

    let seed = 42;
    const noise = new Int16Array(8000 * 3).map(() => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return Math.round(((seed / 0x7fffffff) * 2 - 1) * 20); // RMS ≈ 12, about -69 dBFS
    });
    expect((await detect(noise)).events).toEqual([]);
  });

  it('ignores speech quieter than vad_min_volume even though the model hears it', async () => {
    const quiet = load('hello-appointment.wav').map((s) => Math.round(s * 10 ** (-30 / 20))); // -30 dB
    const gated = await detect(quiet, { min_volume: 0.6 });
    expect(gated.maxConfidence).toBeGreaterThan(0.9);
    expect(gated.events).toEqual([]);
    expect((await detect(quiet, { min_volume: 0.4 })).events.length).toBeGreaterThan(0);
  });

  it('keeps each call separate on the one shared session, even when calls interleave', async () => {
    const a = int16ToFloat32(load('stop-wait.wav'));
    const b = int16ToFloat32(load('hello-appointment.wav'));
    const windows = (x: Float32Array) => Array.from({ length: Math.floor(x.length / 256) }, (_, i) => x.subarray(i * 256, i * 256 + 256));
    const alone = model.createStream();
    const expected: number[] = [];
    for (const w of windows(a)) expected.push(await alone.probability(w));

    const s1 = model.createStream();
    const s2 = model.createStream();
    const wb = windows(b);
    const got: number[] = [];
    await Promise.all([
      (async () => {
        for (const w of windows(a)) got.push(await s1.probability(w));
      })(),
      (async () => {
        for (const w of wb) await s2.probability(w);
      })(),
    ]);
    expect(got).toEqual(expected);
    expect(Math.max(...expected)).toBeGreaterThan(0.9);
  });

  it('enforces the window size and one window at a time per stream', async () => {
    const stream = model.createStream();
    await expect(stream.probability(new Float32Array(160))).rejects.toThrow(/256-sample windows/);
    const first = stream.probability(new Float32Array(256));
    await expect(stream.probability(new Float32Array(256))).rejects.toThrow(/one at a time/);
    await first;
    expect(() => model.createStream(44100 as never)).toThrow(RangeError);
  });
});
