/**
 * The Sarvam speech-to-text adapter (streaming WebSocket, REST fallback) against the local
 * Sarvam fake, over real sockets.
 */
import { SarvamStt } from '../../src/providers/stt/sarvam';
import type { SttOptions, SttTranscript } from '../../src/providers/stt/types';
import { startFakeSarvam, type FakeSarvam, type FakeSarvamOptions } from '../fakes/sarvam-server';
import { pcmSilenceFrames, pcmToneFrames } from '../support/caller-pcm';
import { nextEvent, sleep } from '../support/speech';

const API_KEY = 'sarvam-test-key';

describe('Sarvam speech-to-text', () => {
  let fake: FakeSarvam;
  const streams: SarvamStt[] = [];
  const start = async (options: Partial<FakeSarvamOptions> = {}) => {
    fake = await startFakeSarvam({ apiKey: API_KEY, ...options });
  };
  const open = (options: Partial<SttOptions> = {}) => {
    const stt = new SarvamStt({ apiKey: API_KEY, baseUrl: fake.url, sampleRate: 8000, language: 'hi-IN', ...options });
    streams.push(stt);
    return stt;
  };
  const speak = (stt: SarvamStt, frames: Buffer[]) => frames.forEach((f) => stt.sendAudio(f));

  afterEach(async () => {
    await Promise.all(streams.splice(0).map((s) => s.close()));
    await fake.stop();
  });

  it('streams PCM as base64 audio messages with the key header and answers finalize() with a flushed final', async () => {
    await start();
    fake.script(['मुझे एक टेबल बुक करनी है']);
    const stt = open();
    const started = nextEvent(stt, 'speechStarted');
    const final = nextEvent<SttTranscript>(stt, 'transcript');
    // Sent before the handshake finished: queued, nothing lost.
    speak(stt, [...pcmToneFrames(1000), ...pcmSilenceFrames(200)]);
    stt.finalize();
    expect(await final).toMatchObject({ text: 'मुझे एक टेबल बुक करनी है', isFinal: true, speechFinal: true, fromFinalize: true });
    await started;
    const s = fake.received.streams[0]!;
    expect(s.headers['api-subscription-key']).toBe(API_KEY);
    expect(s.query).toEqual({
      'language-code': 'hi-IN',
      model: 'saaras:v3',
      mode: 'transcribe',
      sample_rate: '8000',
      input_audio_codec: 'pcm_s16le',
      vad_signals: 'true',
      flush_signal: 'true',
    });
    expect(s.audioBytes).toBe(1200 * 16);
    expect(s.audioMessages[0]).toEqual({ sample_rate: '8000', encoding: 'audio/wav' });
    expect(s.controls).toEqual(['flush']);
    expect(stt.transport).toBe('stream');
  });

  it("ends an utterance on Sarvam's own end of speech; a finalize() after it answers at once with an empty final and no flush", async () => {
    await start();
    fake.script(['வணக்கம்']);
    const stt = open({ language: 'ta', settings: { high_vad_sensitivity: true } });
    const finals: SttTranscript[] = [];
    stt.on('transcript', (t) => finals.push(t));
    speak(stt, [...pcmToneFrames(400), ...pcmSilenceFrames(600)]);
    await nextEvent(stt, 'transcript');
    stt.finalize();
    expect(finals.map((f) => [f.text, f.fromFinalize])).toEqual([
      ['வணக்கம்', false],
      ['', true],
    ]);
    expect(fake.received.streams[0]!.query).toMatchObject({ 'language-code': 'ta-IN', high_vad_sensitivity: 'true' });
    expect(fake.received.streams[0]!.controls).toEqual([]);
  });

  it('a flush Sarvam leaves unanswered (noise it did not take for speech) is not repeated: the next finalize() answers at once', async () => {
    await start();
    const stt = open();
    await stt.ready;
    // Loud enough for the adapter to suspect speech, too quiet for Sarvam's VAD.
    speak(stt, pcmToneFrames(400, 8000, 300, 350));
    await sleep(50);
    stt.finalize();
    await sleep(100);
    const final = nextEvent<SttTranscript>(stt, 'transcript');
    stt.finalize();
    expect(await final).toMatchObject({ text: '', fromFinalize: true });
    expect(fake.received.streams[0]!.controls).toEqual(['flush']);
  });

  it('stt_mode translate uses saaras with mode=translate (English text for Hindi speech)', async () => {
    await start();
    fake.script(({ mode }) => (mode === 'translate' ? 'I want to book a table' : 'मुझे एक टेबल बुक करनी है'));
    const stt = open({ mode: 'translate' });
    const final = nextEvent<SttTranscript>(stt, 'transcript');
    speak(stt, pcmToneFrames(500));
    stt.finalize();
    expect((await final).text).toBe('I want to book a table');
    expect(fake.received.streams[0]!.query).toMatchObject({ model: 'saaras:v3', mode: 'translate' });
    expect(() => new SarvamStt({ apiKey: API_KEY, baseUrl: fake.url, mode: 'translate', model: 'saarika:v2.5' })).toThrow(
      'Sarvam stt_mode translate needs a saaras model (got saarika:v2.5); saarika only transcribes',
    );
  });

  it('reports a rejected key as a fatal error (no REST fallback for a bad key)', async () => {
    await start();
    const stt = open({ apiKey: 'wrong' });
    const closed = nextEvent<{ code: number }>(stt, 'closed');
    const err = await nextEvent<Error & { details: { status?: number; fatal?: boolean } }>(stt, 'error');
    expect(err.message).toBe('Sarvam rejected the connection: HTTP 403 (Invalid API key)');
    expect(err.details).toMatchObject({ status: 403, fatal: true });
    await expect(stt.ready).rejects.toThrow('HTTP 403');
    await closed;
    expect(fake.received.rest).toHaveLength(0);
  });

  it.each([403, 404, 426])('falls back to REST per utterance when streaming is refused with HTTP %i', async (status) => {
    await start({ refuseStreaming: status });
    fake.script(['REST वाला जवाब']);
    const stt = open({ mode: 'transcribe', model: 'saaras:v3' });
    const final = nextEvent<SttTranscript>(stt, 'transcript');
    speak(stt, [...pcmSilenceFrames(1000), ...pcmToneFrames(800), ...pcmSilenceFrames(100)]);
    stt.finalize();
    await stt.ready;
    expect(stt.transport).toBe('rest');
    expect(stt.finalWaitMs).toBe(4000);
    expect(await final).toMatchObject({ text: 'REST वाला जवाब', isFinal: true, fromFinalize: true });
    const req = fake.received.rest[0]!;
    expect(req.headers['api-subscription-key']).toBe(API_KEY);
    expect(req.fields).toEqual({ model: 'saaras:v3', language_code: 'hi-IN', mode: 'transcribe' });
    // Leading silence trimmed to 300 ms; speech and its tail kept.
    expect(req.durationMs).toBe(1200);
  });

  it('maps a Sarvam error message to an error event with its text and code', async () => {
    await start();
    const stt = open();
    await stt.ready;
    const err = nextEvent<Error>(stt, 'error');
    (stt as unknown as { ws: { send(d: string): void } }).ws.send(JSON.stringify({ type: 'bogus' }));
    expect((await err).message).toBe('Sarvam error: Invalid message format (invalid_request_error)');
  });

  it('reports a dropped stream with error and closed events', async () => {
    await start();
    const stt = open();
    await stt.ready;
    const closed = nextEvent<{ code: number }>(stt, 'closed');
    const err = nextEvent<Error>(stt, 'error');
    fake.dropConnections(1011, 'Internal server error');
    expect((await err).message).toBe('Sarvam stream closed: 1011 Internal server error');
    expect((await closed).code).toBe(1011);
  });

  it('keeps a quiet stream alive with silence past the idle timeout', async () => {
    await start({ idleTimeoutMs: 300 });
    const stt = open({ keepAliveIntervalMs: 100 });
    const errors: Error[] = [];
    stt.on('error', (e) => errors.push(e));
    await stt.ready;
    await sleep(900);
    expect(errors).toEqual([]);
    expect(fake.received.streams[0]!.closed).toBeUndefined();
    expect(fake.received.streams[0]!.audioMessages.length).toBeGreaterThanOrEqual(4);
  });

  it('close() flushes the speech in flight as a final, then closes cleanly', async () => {
    await start();
    fake.script(['धन्यवाद']);
    const stt = open();
    const events: string[] = [];
    stt.on('transcript', (t) => events.push(`final:${t.text}`));
    stt.on('closed', ({ code }) => events.push(`closed:${code}`));
    await stt.ready;
    speak(stt, pcmToneFrames(300));
    await nextEvent(stt, 'speechStarted');
    await stt.close();
    expect(events).toEqual(['final:धन्यवाद', 'closed:1000']);
  });
});
