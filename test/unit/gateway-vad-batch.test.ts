/**
 * Batched Silero inference for many calls gives each call exactly what its own SileroStream
 * would: same probabilities window by window, same VAD events.
 */
import path from 'node:path';
import { int16ToFloat32 } from '../../src/audio/pcm';
import { readWavFile } from '../../src/gateway/recording/wav';
import { sharedSileroModel, type SileroVadModel, type SpeechProbability } from '../../src/gateway/vad/silero';
import { SileroBatcher } from '../../src/gateway/vad/silero-batch';
import { VadAnalyzer, type VadEvent } from '../../src/gateway/vad/vad-analyzer';

const FIXTURES = path.join(__dirname, '../fixtures/audio');
const FILES = ['hello-appointment.wav', 'stop-wait.wav', 'silence-speech-silence.wav'];

let model: SileroVadModel;
beforeAll(async () => {
  model = await sharedSileroModel();
});

const load = (name: string) => readWavFile(path.join(FIXTURES, name)).samples;

async function probabilities(stream: SpeechProbability, pcm: Int16Array): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i + 256 <= pcm.length; i += 256) out.push(await stream.probability(int16ToFloat32(pcm.subarray(i, i + 256))));
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
});
