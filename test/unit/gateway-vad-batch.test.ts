/**
 * Batched Silero inference for many calls gives each call exactly what its own SileroStream
 * would: same probabilities window by window, same VAD events.
 */
import path from 'node:path';
import { int16ToFloat32 } from '../../src/audio/pcm';
import { resample } from '../../src/audio/resampler';
import { readWavFile } from '../../src/audio/wav';
import { defaultSileroModelPath, sharedSileroModel, type SileroVadModel, type SpeechProbability } from '../../src/gateway/vad/silero';
import { SileroBatcher } from '../../src/gateway/vad/silero-batch';
import { SileroThread } from '../../src/gateway/vad/silero-thread';
import { VadAnalyzer, type VadEvent } from '../../src/gateway/vad/vad-analyzer';

const FIXTURES = path.join(__dirname, '../fixtures/audio');
const FILES = ['hello-appointment.wav', 'stop-wait.wav', 'silence-speech-silence.wav'];

let model: SileroVadModel;
beforeAll(async () => {
  model = await sharedSileroModel();
});

const load = (name: string) => readWavFile(path.join(FIXTURES, name)).samples;

/** A fixture as a 16 kHz PCM stream (Exotel, Plivo L16) would carry it. */
const load16k = (name: string) => resample(load(name), 8000, 16000);

async function probabilities(stream: SpeechProbability, pcm: Int16Array): Promise<number[]> {
  const out: number[] = [];
  const w = stream.windowSamples;
  for (let i = 0; i + w <= pcm.length; i += w) out.push(await stream.probability(int16ToFloat32(pcm.subarray(i, i + w))));
  return out;
}

describe('batched Silero VAD', () => {
  it('matches a stream of its own window by window, while streams share batches', async () => {
    const batcher = SileroBatcher.of(model);
    const audio = FILES.map(load);
    const alone = await Promise.all(audio.map((pcm) => probabilities(model.createStream(8000), pcm)));
    const batched = await Promise.all(audio.map((pcm) => probabilities(batcher.createStream(), pcm)));
    for (let f = 0; f < FILES.length; f++) {
      expect(batched[f]!.length).toBe(alone[f]!.length);
      for (let w = 0; w < alone[f]!.length; w++) expect(Math.abs(batched[f]![w]! - alone[f]![w]!)).toBeLessThan(1e-4);
    }
    // The three calls really ran together.
    expect(batcher.stats.windows / batcher.stats.batches).toBeGreaterThan(2);
  });

  it('runs 16 kHz streams (512-sample windows) beside 8 kHz ones, each matching a stream of its own', async () => {
    const batcher = SileroBatcher.of(model);
    const narrow = FILES.map(load);
    const wide = FILES.map(load16k);
    const alone8 = await Promise.all(narrow.map((pcm) => probabilities(model.createStream(8000), pcm)));
    const alone16 = await Promise.all(wide.map((pcm) => probabilities(model.createStream(16000), pcm)));
    // Both rates at once on one batcher: they queue apart (the rate is one input per batch).
    const [batched8, batched16] = await Promise.all([
      Promise.all(narrow.map((pcm) => probabilities(batcher.createStream(8000), pcm))),
      Promise.all(wide.map((pcm) => probabilities(batcher.createStream(16000), pcm))),
    ]);
    for (const [alone, batched] of [[alone8, batched8], [alone16, batched16]] as const) {
      for (let f = 0; f < FILES.length; f++) {
        expect(batched[f]!.length).toBe(alone[f]!.length);
        for (let w = 0; w < alone[f]!.length; w++) expect(Math.abs(batched[f]![w]! - alone[f]![w]!)).toBeLessThan(1e-4);
      }
    }
    // 16 kHz windows are 32 ms too: as many windows per second of audio as at 8 kHz.
    expect(Math.abs(alone16[0]!.length - alone8[0]!.length)).toBeLessThanOrEqual(1);
    expect(() => batcher.createStream(24000 as 8000)).toThrow(/8000 or 16000/);
  });

  it('finds speech at 16 kHz where it finds it at 8 kHz', async () => {
    const batcher = SileroBatcher.of(model);
    const run = async (rate: 8000 | 16000, pcm: Int16Array) => {
      const events: VadEvent[] = [];
      const vad = new VadAnalyzer(batcher.createStream(rate), {}, (e) => events.push(e));
      const frame = rate / 50;
      for (let i = 0; i + frame <= pcm.length; i += frame) vad.push(pcm.subarray(i, i + frame));
      await vad.idle();
      return events;
    };
    for (const file of FILES) {
      const [at8, at16] = await Promise.all([run(8000, load(file)), run(16000, load16k(file))]);
      expect(at16.map((e) => e.type)).toEqual(at8.map((e) => e.type));
      // Where the speech begins and ends: the same window or the next.
      expect(Math.abs(at16[0]!.at_ms - at8[0]!.at_ms)).toBeLessThanOrEqual(64);
      expect(Math.abs(at16.at(-1)!.at_ms - at8.at(-1)!.at_ms)).toBeLessThanOrEqual(64);
      // A pause inside it (stop-wait's comma) may be heard a few windows apart: the models differ per rate.
      for (let i = 0; i < at8.length; i++) expect(Math.abs(at16[i]!.at_ms - at8[i]!.at_ms)).toBeLessThanOrEqual(160);
    }
  });

  it('gives the same VAD events as the unbatched model', async () => {
    const batcher = SileroBatcher.of(model);
    const run = async (make: () => SpeechProbability, pcm: Int16Array) => {
      const events: VadEvent[] = [];
      const vad = new VadAnalyzer(make(), {}, (e) => events.push(e));
      for (let i = 0; i + 160 <= pcm.length; i += 160) vad.push(pcm.subarray(i, i + 160));
      await vad.idle();
      return events;
    };
    for (const file of FILES) {
      const pcm = load(file);
      const [a, b] = await Promise.all([run(() => model.createStream(8000), pcm), run(() => batcher.createStream(), pcm)]);
      expect(b).toEqual(a);
      expect(a.length).toBeGreaterThan(0);
    }
  });

  /** VAD events of `pcm` pushed in chunks of `chunk` samples as they would arrive, on `make()`'s model. */
  async function eventsOf(make: () => SpeechProbability, pcm: Int16Array, chunk: number): Promise<VadEvent[]> {
    const events: VadEvent[] = [];
    const vad = new VadAnalyzer(make(), {}, (e) => events.push(e));
    for (let i = 0; i + chunk <= pcm.length; i += chunk) vad.push(pcm.subarray(i, i + chunk));
    await vad.idle();
    return events;
  }

  it("takes a stream's backlog in one job: 100 ms chunks (Exotel) and a stall cost one job, not one per window", async () => {
    const batcher = SileroBatcher.of(model);
    for (const file of FILES) {
      const pcm = load(file);
      // 100 ms chunks (800 samples = 3⅛ windows) find what 20 ms frames find, window for window.
      expect(await eventsOf(() => batcher.createStream(), pcm, 800)).toEqual(await eventsOf(() => model.createStream(8000), pcm, 160));
    }
    // A second of audio waiting at once (an event loop that stalled): all 31 windows in one job.
    const before = { ...batcher.stats };
    const vad = new VadAnalyzer(batcher.createStream());
    vad.push(load('hello-appointment.wav').subarray(0, 8000));
    await vad.idle();
    expect(batcher.stats.windows - before.windows).toBe(31);
    expect(batcher.stats.batches - before.batches).toBe(1);
  });

  it('runs on a thread of its own (GATEWAY_VAD_THREAD) with the same probabilities and events', async () => {
    const thread = new SileroThread(defaultSileroModelPath());
    await thread.start();
    const batcher = new SileroBatcher(thread);
    try {
      const audio = FILES.map(load);
      const alone = await Promise.all(audio.map((pcm) => probabilities(model.createStream(8000), pcm)));
      const threaded = await Promise.all(audio.map((pcm) => probabilities(batcher.createStream(), pcm)));
      for (let f = 0; f < FILES.length; f++) {
        expect(threaded[f]!.length).toBe(alone[f]!.length);
        for (let w = 0; w < alone[f]!.length; w++) expect(Math.abs(threaded[f]![w]! - alone[f]![w]!)).toBeLessThan(1e-4);
      }
      const wide = load16k('stop-wait.wav');
      expect(await eventsOf(() => batcher.createStream(16000), wide, 1600)).toEqual(await eventsOf(() => model.createStream(16000), wide, 320));
    } finally {
      await batcher.close();
    }
    // A closed thread fails what is asked of it (the VAD then hears silence) instead of hanging.
    await expect(batcher.createStream().probability(new Float32Array(256))).rejects.toThrow(/closed/);
  });
});
