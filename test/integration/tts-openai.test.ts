/**
 * The OpenAI TTS adapter (official SDK) against the fake OpenAI's `/v1/audio/speech`: Bearer auth,
 * `response_format: "pcm"` resampled once to the stream format, sentences requested at once and
 * played in order, barge-in aborting the request, vendor errors and timeouts as clear messages.
 */
import { FormatConverter, MULAW_8K, PCM16_16K } from '../../src/audio/format';
import { createAgentTts, type TtsOptions, type TtsSession } from '../../src/providers/tts';
import { OpenAiTts } from '../../src/providers/tts/openai';
import { synthesize } from '../fakes/fake-tts-audio';
import type { FakeOpenAISpeechOptions } from '../fakes/openai-speech';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { audioOf, mulawRms, nextEvent, recordTts } from '../support/speech';

const KEY = 'sk-tts-test';

describe('OpenAI TTS', () => {
  let fake: FakeOpenAI | undefined;
  const sessions: TtsSession[] = [];
  const start = async (speech: FakeOpenAISpeechOptions = {}) => {
    fake = await startFakeOpenAI({ speech });
    return fake;
  };
  const open = (options: Partial<TtsOptions> = {}) => {
    const tts = new OpenAiTts({ apiKey: KEY, baseUrl: fake!.url, ...options });
    sessions.push(tts);
    return tts;
  };

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    await fake?.stop();
    fake = undefined;
  });

  it('requests pcm with the Bearer key, one request per sentence, and plays them in order resampled to μ-law 8 kHz', async () => {
    // The second sentence answers first: its audio must still come after the first one's.
    await start({ headerDelayMs: (input) => (input.startsWith('Hello') ? 150 : 0) });
    const tts = open();
    const r = recordTts(tts);
    tts.startUtterance('turn-1');
    tts.pushText('turn-1', 'Hello there.');
    tts.pushText('turn-1', 'How can I help you today?');
    tts.endText('turn-1');
    await nextEvent(tts, 'done');

    expect(r.done).toEqual([{ id: 'turn-1', reason: 'completed', characters: 37 }]);
    expect(r.errors).toEqual([]);
    const requests = fake!.speechRequests;
    expect(requests.map((q) => q.body)).toEqual([
      { model: 'gpt-4o-mini-tts', voice: 'alloy', response_format: 'pcm', input: 'Hello there.' },
      { model: 'gpt-4o-mini-tts', voice: 'alloy', response_format: 'pcm', input: 'How can I help you today?' },
    ]);
    expect(requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    // Exactly the vendor's 24 kHz audio, in sentence order, through one resampler.
    const first = synthesize('Hello there.', {}, 0, 'pcm_s16le', 24_000).audio;
    const second = synthesize('How can I help you today?', {}, 0, 'pcm_s16le', 24_000).audio;
    const converter = new FormatConverter({ encoding: 'pcm16', sampleRate: 24_000 }, MULAW_8K);
    const expected = Buffer.concat([converter.convert(Buffer.concat([first, second])), converter.flush()]);
    const audio = audioOf(r, 'turn-1');
    expect(audio.length).toBe(expected.length);
    expect(audio.equals(expected)).toBe(true);
    expect(Math.abs(audio.length - 37 * 60 * 8)).toBeLessThan(40);
    expect(mulawRms(audio)).toBeGreaterThan(3000);
  });

  it('produces 16-bit PCM at 16 kHz for such a stream; voice, tts_model and tts_settings reach the request', async () => {
    const f = await start();
    const tts = createAgentTts(
      { tts_provider: 'openai', voice: 'coral', tts_model: 'tts-1', tts_settings: { speed: 1.25, response_format: 'mp3' } },
      { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: f.url },
      { format: PCM16_16K },
    );
    sessions.push(tts);
    const r = recordTts(tts);
    tts.startUtterance('u1');
    tts.pushText('u1', 'Namaste.');
    tts.endText('u1');
    await nextEvent(tts, 'done');
    expect(f.speechRequests[0]!.body).toEqual({ model: 'tts-1', voice: 'coral', speed: 1.25, response_format: 'pcm', input: 'Namaste.' });
    expect(Math.abs(audioOf(r, 'u1').length - 8 * 60 * 16 * 2)).toBeLessThan(100);
  });

  it('barge-in aborts the request: done cancelled at once, no audio of it afterwards', async () => {
    await start({ chunkMs: 20, chunkIntervalMs: 10 });
    const tts = open();
    const r = recordTts(tts);
    tts.startUtterance('long');
    tts.pushText('long', 'This is a rather long answer that the caller will interrupt halfway through.');
    tts.endText('long');
    await nextEvent(tts, 'audio');
    tts.cancel('long');
    const heard = r.audio.length;
    expect(r.done).toEqual([{ id: 'long', reason: 'cancelled', characters: 76 }]);
    await nextEvent(tts, 'never', () => true, 150).catch(() => undefined);
    expect(r.audio.length).toBe(heard);
    expect(r.errors).toEqual([]);
    expect(fake!.speechRequests[0]!.aborted).toBe(true);
  });

  it.each([
    ['an unknown voice', { voice: 'robot' }, {}, "OpenAI TTS error 400: Invalid value for 'voice': 'robot'.", 400],
    ['an unknown model', { model: 'tts-9' }, {}, "OpenAI TTS error 404: The model 'tts-9' does not exist or you do not have access to it.", 404],
    ['a server error', {}, { errorText: 'Boom' }, 'OpenAI TTS error 500: The server had an error while processing your request.', 500],
  ] as const)('%s ends the utterance with a clear error', async (_name, options, fakeOptions, message, status) => {
    await start(fakeOptions);
    const tts = open(options);
    const r = recordTts(tts);
    tts.startUtterance('u1');
    tts.pushText('u1', 'Boom goes the dynamite.');
    tts.endText('u1');
    await nextEvent(tts, 'done');
    expect(r.done).toEqual([{ id: 'u1', reason: 'error', characters: 23 }]);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]!.message).toBe(message);
    expect(r.errors[0]!.details).toMatchObject({ utteranceId: 'u1', status });
  });

  it('a vendor that sends no audio in time is a timeout error naming the wait', async () => {
    await start({ headerDelayMs: 500 });
    const tts = open({ handshakeTimeoutMs: 100 });
    const r = recordTts(tts);
    tts.startUtterance('u1');
    tts.pushText('u1', 'Hello.');
    tts.endText('u1');
    await nextEvent(tts, 'done');
    expect(r.done).toEqual([{ id: 'u1', reason: 'error', characters: 6 }]);
    expect(r.errors[0]!.message).toBe('OpenAI TTS timed out: no audio within 0.1 s');
  });

  it('an unreachable server is a connection error', async () => {
    const tts = new OpenAiTts({ apiKey: KEY, baseUrl: 'http://127.0.0.1:9/v1' });
    sessions.push(tts);
    const r = recordTts(tts);
    tts.startUtterance('u1');
    tts.pushText('u1', 'Hello.');
    await nextEvent(tts, 'done');
    expect(r.errors[0]!.message).toMatch(/^OpenAI TTS connection failed: /);
  });
});
