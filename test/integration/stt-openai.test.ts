/**
 * The OpenAI speech-to-text adapter (VAD segment → /v1/audio/transcriptions through the openai
 * SDK) against the local fake, over a real socket.
 */
import { createOpenAiStt } from '../../src/providers/stt/openai';
import type { SttStream, SttTranscript } from '../../src/providers/stt/types';
import { startFakeOpenAiTranscription, type FakeOpenAiTranscription } from '../fakes/openai-transcription-server';
import { pcmSilenceFrames, pcmToneFrames } from '../support/caller-pcm';
import { nextEvent } from '../support/speech';

const API_KEY = 'sk-openai-stt-test';

describe('OpenAI speech-to-text (segment upload)', () => {
  let fake: FakeOpenAiTranscription;
  const streams: SttStream[] = [];
  const open = (options: Partial<Parameters<typeof createOpenAiStt>[0]> = {}) => {
    const stt = createOpenAiStt({ apiKey: API_KEY, baseUrl: fake.url, sampleRate: 8000, ...options });
    streams.push(stt);
    return stt;
  };
  const speak = (stt: SttStream, frames: Buffer[]) => frames.forEach((f) => stt.sendAudio(f));

  beforeEach(async () => {
    fake = await startFakeOpenAiTranscription({ apiKey: API_KEY });
  });
  afterEach(async () => {
    await Promise.all(streams.splice(0).map((s) => s.close()));
    await fake.stop();
  });

  it('uploads the utterance as a WAV at finalize() and answers with a final transcript; leading silence is trimmed', async () => {
    fake.script(['मुझे एक टेबल बुक करनी है।']);
    const stt = open({ language: 'hi-IN' });
    expect(stt.finalWaitMs).toBe(4000);
    const final = nextEvent<SttTranscript>(stt, 'transcript');
    // 3 s of silence while the agent talked, then 1.2 s of speech and the VAD's 100 ms of quiet.
    speak(stt, [...pcmSilenceFrames(3000), ...pcmToneFrames(1200), ...pcmSilenceFrames(100)]);
    stt.finalize();
    expect(await final).toMatchObject({ text: 'मुझे एक टेबल बुक करनी है।', isFinal: true, speechFinal: true, fromFinalize: true });

    const req = fake.requests[0]!;
    expect(req.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req.fields).toMatchObject({ model: 'gpt-4o-mini-transcribe', language: 'hi', response_format: 'json' });
    expect(req.fileType).toBe('audio/wav');
    expect(req.sampleRate).toBe(8000);
    // 300 ms lead-in + 1200 ms speech + 100 ms tail: the 3 s of silence before did not go out.
    expect(req.durationMs).toBe(1600);
    expect(stt.audioBytesSent).toBe(1600 * 16);
  });

  it('answers a finalize() with nothing said at once with an empty final, without a request', async () => {
    const stt = open();
    const final = nextEvent<SttTranscript>(stt, 'transcript');
    speak(stt, pcmSilenceFrames(500));
    stt.finalize();
    expect(await final).toMatchObject({ text: '', isFinal: true, fromFinalize: true });
    expect(fake.requests).toHaveLength(0);
  });

  it('keeps utterances in the order spoken although each is a separate request; stt_model and stt_settings.prompt are sent', async () => {
    fake.setDelay(50);
    fake.script(['First.', 'Second.']);
    const stt = open({ model: 'whisper-1', settings: { prompt: 'Acme, refund' }, sampleRate: 16000 });
    const texts: string[] = [];
    stt.on('transcript', (t) => texts.push(t.text));
    speak(stt, pcmToneFrames(400, 16000));
    stt.finalize();
    speak(stt, pcmToneFrames(400, 16000));
    stt.finalize();
    await nextEvent(stt, 'transcript', (t: SttTranscript) => t.text === 'Second.');
    expect(texts).toEqual(['First.', 'Second.']);
    expect(fake.requests.map((r) => [r.fields.model, r.fields.prompt, r.sampleRate])).toEqual([
      ['whisper-1', 'Acme, refund', 16000],
      ['whisper-1', 'Acme, refund', 16000],
    ]);
  });

  it('maps a rejected key to a fatal error that ends the stream, and still completes the turn', async () => {
    const stt = open({ apiKey: 'sk-wrong' });
    const events: string[] = [];
    stt.on('transcript', (t) => events.push(`final:${t.text}`));
    stt.on('closed', (c) => events.push(`closed:${c.code}`));
    const err = nextEvent<Error & { details: { status?: number; fatal?: boolean } }>(stt, 'error');
    const closed = nextEvent(stt, 'closed');
    speak(stt, pcmToneFrames(300));
    stt.finalize();
    expect((await err).message).toBe('OpenAI transcription failed: HTTP 401 (Incorrect API key provided.)');
    expect((await err).details).toMatchObject({ status: 401, fatal: true });
    await closed;
    expect(events).toEqual(['final:', 'closed:1008']);
  });

  it('reports a server error for one utterance and goes on transcribing the next', async () => {
    fake.failNext(1, 503, 'Service overloaded');
    fake.script(['Still here.']);
    const stt = open();
    const err = nextEvent<Error>(stt, 'error');
    speak(stt, pcmToneFrames(300));
    stt.finalize();
    expect((await err).message).toBe('OpenAI transcription failed: HTTP 503 (Service overloaded)');
    speak(stt, pcmToneFrames(300));
    stt.finalize();
    expect((await nextEvent<SttTranscript>(stt, 'transcript', (t) => t.text !== '')).text).toBe('Still here.');
  });

  it('gives up on a response slower than the final wait with a timeout error', async () => {
    fake.setDelay(800);
    fake.script(['Too late.']);
    const stt = open({ settings: { final_wait_ms: 200 } });
    expect(stt.finalWaitMs).toBe(200);
    const err = nextEvent<Error>(stt, 'error');
    const final = nextEvent<SttTranscript>(stt, 'transcript');
    speak(stt, pcmToneFrames(300));
    stt.finalize();
    expect((await err).message).toBe('OpenAI transcription timed out after 200 ms');
    expect((await final).text).toBe('');
  });
});
