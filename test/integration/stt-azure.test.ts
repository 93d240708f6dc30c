/**
 * The Azure speech-to-text adapter (Speech SDK, push stream, continuous recognition) against the
 * local fake of the Speech service's WebSocket protocol, reached as a container via AZURE_SPEECH_HOST.
 */
import { PCM16_8K } from '../../src/audio/format';
import { AzureStt, descriptor } from '../../src/providers/stt/azure';
import type { SttTranscript } from '../../src/providers/stt/types';
import { startFakeAzureSpeech, type FakeAzureSpeech, type FakeAzureSpeechOptions } from '../fakes/azure-speech-server';
import { pcmSilenceFrames, pcmToneFrames } from '../support/caller-pcm';
import { nextEvent, sleep, until } from '../support/speech';
import { openVendorSockets } from '../../src/providers/socket-census';

const KEY = 'azure-speech-test-key';
const azureSockets = () => openVendorSockets().find((c) => c.vendor === 'azure' && c.kind === 'stt')?.count ?? 0;

describe('Azure speech-to-text (Speech SDK)', () => {
  let fake: FakeAzureSpeech;
  const streams: AzureStt[] = [];
  const start = async (options: Partial<FakeAzureSpeechOptions> = {}) => {
    fake = await startFakeAzureSpeech({ apiKey: KEY, ...options });
  };
  const open = (options: Partial<ConstructorParameters<typeof AzureStt>[0]> = {}) => {
    const stt = new AzureStt({ connection: { key: KEY, host: fake.url }, sampleRate: 8000, language: 'hi-IN', ...options });
    streams.push(stt);
    return stt;
  };
  const speak = (stt: AzureStt, frames: Buffer[]) => frames.forEach((f) => stt.sendAudio(f));

  afterEach(async () => {
    await Promise.all(streams.splice(0).map((s) => s.close()));
    await fake.stop();
  });

  it('streams 16-bit PCM at the stream rate with the key, and turns hypotheses and the phrase into interim and final transcripts', async () => {
    await start();
    fake.script(['मुझे कल के लिए एक टेबल चाहिए']);
    const stt = open();
    const transcripts: SttTranscript[] = [];
    stt.on('transcript', (t) => transcripts.push(t));
    await stt.ready;
    const started = nextEvent(stt, 'speechStarted');
    const final = nextEvent<SttTranscript>(stt, 'transcript', (t) => t.isFinal);
    speak(stt, [...pcmToneFrames(1200), ...pcmSilenceFrames(500)]);
    expect(await final).toMatchObject({ text: 'मुझे कल के लिए एक टेबल चाहिए', isFinal: true, speechFinal: true, fromFinalize: false, startSecs: 0, durationSecs: 1.2 });
    await started;
    const interims = transcripts.filter((t) => !t.isFinal).map((t) => t.text);
    expect(interims.length).toBeGreaterThanOrEqual(2);
    expect(interims[0]).toBe('मुझे');
    const rec = fake.received.recognitions[0]!;
    expect(rec.headers['ocp-apim-subscription-key']).toBe(KEY);
    expect(rec.language).toBe('hi-IN');
    expect(rec.waveRate).toBe(8000);
    expect(rec.waveBits).toBe(16);
    expect(rec.context.phraseDetection.conversation.segmentation.segmentationSilenceTimeoutMs).toBe(400);
  });

  it('finalize() with a phrase open closes it now (segmentation silence written) and marks its final as the answer; with nothing open it answers at once', async () => {
    await start({ phraseDelayMs: 100 });
    fake.script(['Book it.']);
    const stt = open({ language: 'en', sampleRate: 16000 });
    await stt.ready;
    const finals: SttTranscript[] = [];
    stt.on('transcript', (t) => t.isFinal && finals.push(t));
    speak(stt, [...pcmToneFrames(600, 16000), ...pcmSilenceFrames(100, 16000)]);
    // Only 100 ms of silence so far: finalize() writes the segmentation silence itself, so the
    // phrase closes now instead of after 400 ms more of the caller's silence.
    stt.finalize();
    await nextEvent(stt, 'transcript', (t: SttTranscript) => t.isFinal);
    speak(stt, pcmSilenceFrames(500, 16000));
    await sleep(100);
    stt.finalize();
    expect(finals.map((f) => [f.text, f.fromFinalize])).toEqual([
      ['Book it.', true],
      ['', true],
    ]);
    expect(fake.received.recognitions[0]!).toMatchObject({ language: 'en-US', waveRate: 16000 });
  });

  it('reports a rejected key as a fatal error and ends the stream', async () => {
    await start();
    const stt = open({ connection: { key: 'wrong', host: fake.url } });
    const closed = nextEvent<{ code: number }>(stt, 'closed', () => true, 10_000);
    const err = await nextEvent<Error & { details: { fatal?: boolean } }>(stt, 'error', () => true, 10_000);
    expect(err.message).toBe('Azure Speech rejected the connection: HTTP 401 (check AZURE_SPEECH_KEY and AZURE_SPEECH_REGION / HOST / ENDPOINT)');
    expect(err.details).toMatchObject({ status: 401, fatal: true });
    await expect(stt.ready).rejects.toThrow('HTTP 401');
    expect((await closed).code).toBe(1008);
    expect(fake.received.rejected[0]).toEqual({ status: 401, path: '/speech/recognition/conversation/cognitiveservices/v1' });
  }, 15_000);

  it('reports a language the service refuses with its reason', async () => {
    await start({ languages: ['en-US', 'hi-IN'] });
    const stt = open({ language: 'xx-XX' });
    const closed = nextEvent(stt, 'closed', () => true, 10_000);
    const err = await nextEvent<Error>(stt, 'error', () => true, 10_000);
    expect(err.message).toBe('Azure Speech recognition failed: BadRequestParameters: Unsupported language: xx-XX');
    await closed;
  }, 15_000);

  it('survives a connection the service drops: the SDK reconnects and the caller is transcribed again', async () => {
    await start();
    fake.script(['after the drop']);
    const stt = open({ language: 'en-US' });
    const errors: Error[] = [];
    stt.on('error', (e) => errors.push(e));
    await stt.ready;
    speak(stt, pcmSilenceFrames(200));
    await sleep(100);
    fake.dropConnections(1011, 'Internal server error');
    const final = nextEvent<SttTranscript>(stt, 'transcript', (t) => t.isFinal, 10_000);
    for (let i = 0; i < 8; i++) {
      speak(stt, pcmToneFrames(100));
      await sleep(50);
    }
    speak(stt, pcmSilenceFrames(600));
    expect((await final).text).toBe('after the drop');
    expect(fake.received.recognitions).toHaveLength(2);
    expect(errors).toEqual([]);
    // The dropped socket left the count, the SDK's new one joined it; close() ends both sides.
    expect(fake.openConnections()).toBe(1);
    expect(azureSockets()).toBe(1);
    await stt.close();
    await until(() => fake.openConnections() === 0);
    expect(azureSockets()).toBe(0);
  }, 15_000);

  it('close() ends the audio: the open phrase still comes back as a final, then the stream closes', async () => {
    await start();
    fake.script(['धन्यवाद']);
    const stt = open();
    const events: string[] = [];
    stt.on('transcript', (t) => t.isFinal && events.push(`final:${t.text}`));
    stt.on('closed', ({ code }) => events.push(`closed:${code}`));
    await stt.ready;
    speak(stt, pcmToneFrames(300));
    await nextEvent(stt, 'speechStarted');
    await stt.close();
    expect(events).toEqual(['final:धन्यवाद', 'closed:1000']);
    expect(fake.received.recognitions[0]!.endOfAudio).toBe(true);
  });

  it('reaches a container given as AZURE_SPEECH_ENDPOINT without a path, like AZURE_SPEECH_HOST', async () => {
    await start({ apiKey: null });
    fake.script(['Hello.']);
    const stt = descriptor.create({ stt_provider: 'azure', stt_language: 'en-US' }, { AZURE_SPEECH_ENDPOINT: fake.url }, { format: PCM16_8K });
    streams.push(stt as AzureStt);
    const final = nextEvent<SttTranscript>(stt, 'transcript', (t) => t.isFinal);
    speak(stt as AzureStt, pcmToneFrames(400));
    stt.finalize();
    expect((await final).text).toBe('Hello.');
    expect(fake.received.recognitions[0]!.path).toBe('/speech/recognition/conversation/cognitiveservices/v1');
  });

  it('its descriptor needs a key and region, or a host/endpoint (container)', () => {
    expect(descriptor.missing({})).toBe('AZURE_SPEECH_KEY is not set (or AZURE_SPEECH_HOST / AZURE_SPEECH_ENDPOINT for a container)');
    expect(descriptor.missing({ AZURE_SPEECH_KEY: 'k' })).toBe('AZURE_SPEECH_REGION is not set (or AZURE_SPEECH_HOST / AZURE_SPEECH_ENDPOINT)');
    expect(descriptor.missing({ AZURE_SPEECH_KEY: 'k', AZURE_SPEECH_REGION: 'centralindia' })).toBeNull();
    expect(descriptor.missing({ AZURE_SPEECH_HOST: 'ws://speech-container:5000' })).toBeNull();
  });
});
