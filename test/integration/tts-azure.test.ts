/**
 * The Azure text-to-speech adapter (Speech SDK) against the local fake of the Speech service's
 * synthesis WebSocket, reached as a container via AZURE_SPEECH_HOST.
 */
import { MULAW_8K, PCM16_16K, PCM16_8K } from '../../src/audio/format';
import { azureSsml, AzureTts, descriptor } from '../../src/providers/tts/azure';
import type { TtsSession } from '../../src/providers/tts/types';
import { startFakeAzureSpeech, type FakeAzureSpeech, type FakeAzureSpeechOptions } from '../fakes/azure-speech-server';
import { synthesize } from '../fakes/fake-tts-audio';
import { nextEvent, until } from '../support/speech';
import { openVendorSockets } from '../../src/providers/socket-census';

const KEY = 'azure-speech-test-key';

interface Recorded {
  audio: Array<{ id: string; audio: Buffer }>;
  done: Array<{ id: string; reason: string; characters: number }>;
  errors: Array<Error & { details: Record<string, unknown> }>;
}

function record(tts: TtsSession): Recorded {
  const r: Recorded = { audio: [], done: [], errors: [] };
  tts.on('audio', (a) => r.audio.push(a));
  tts.on('done', (d) => r.done.push(d));
  tts.on('error', (e) => r.errors.push(e as Recorded['errors'][number]));
  return r;
}
const azureSockets = () => openVendorSockets().find((c) => c.vendor === 'azure' && c.kind === 'tts')?.count ?? 0;
const audioOf = (r: Recorded, id: string) => Buffer.concat(r.audio.filter((a) => a.id === id).map((a) => a.audio));

describe('Azure text-to-speech (Speech SDK)', () => {
  let fake: FakeAzureSpeech;
  const sessions: AzureTts[] = [];
  const start = async (options: Partial<FakeAzureSpeechOptions> = {}) => {
    fake = await startFakeAzureSpeech({ apiKey: KEY, ...options });
  };
  const open = (options: Partial<ConstructorParameters<typeof AzureTts>[0]> = {}) => {
    const tts = new AzureTts({ connection: { key: KEY, host: fake.url }, voice: 'hi-IN-SwaraNeural', language: 'hi-IN', ...options });
    sessions.push(tts);
    return tts;
  };

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    await fake.stop();
  });

  it('speaks a reply sentence by sentence in μ-law 8 kHz, streamed in chunks, then done with the character count', async () => {
    await start({ chunkMs: 100 });
    const tts = open();
    const r = record(tts);
    await tts.ready;
    tts.startUtterance('t1');
    tts.pushText('t1', 'नमस्ते।');
    tts.pushText('t1', 'How can I help?');
    tts.endText('t1');
    await nextEvent(tts, 'done');
    expect(r.errors).toEqual([]);
    expect(r.done).toEqual([{ id: 't1', reason: 'completed', characters: 22 }]);
    const expected = Buffer.concat([synthesize('नमस्ते।', {}, 0).audio, synthesize('How can I help?', {}, 0).audio]);
    expect(audioOf(r, 't1').equals(expected)).toBe(true);
    // Streamed as the service sent it, not as one buffer per sentence.
    expect(r.audio.length).toBeGreaterThan(4);
    const [first, second] = fake.received.syntheses;
    expect(first).toMatchObject({ outputFormat: 'raw-8khz-8bit-mono-mulaw', voice: 'hi-IN-SwaraNeural', lang: 'hi-IN', text: 'नमस्ते।', completed: true });
    expect(second!.text).toBe('How can I help?');
    // One warm connection for the whole call.
    expect(fake.received.synthesisConnections).toBe(1);
  });

  it.each([
    [PCM16_8K, 'raw-8khz-16bit-mono-pcm'],
    [PCM16_16K, 'raw-16khz-16bit-mono-pcm'],
  ])('asks for the stream format itself (%o → %s)', async (format, azureName) => {
    await start();
    const tts = open({ format });
    const r = record(tts);
    tts.startUtterance('u');
    tts.pushText('u', 'Hello.');
    tts.endText('u');
    await nextEvent(tts, 'done');
    expect(fake.received.syntheses[0]!.outputFormat).toBe(azureName);
    expect(audioOf(r, 'u').length).toBe(6 * 60 * (format.sampleRate / 1000) * 2);
  });

  it('writes SSML style and prosody only when tts_settings ask, escaping the text', async () => {
    await start();
    const tts = open({ voice: 'en-IN-NeerjaNeural', language: 'en', settings: { style: 'cheerful', style_degree: 1.5, rate: '+10%' } });
    tts.startUtterance('u');
    tts.pushText('u', 'Tom & Jerry <3');
    tts.endText('u');
    await nextEvent(tts, 'done');
    const { ssml, text, lang } = fake.received.syntheses[0]!;
    expect(lang).toBe('en-US');
    expect(ssml).toContain('<voice name="en-IN-NeerjaNeural"><mstts:express-as style="cheerful" styledegree="1.5"><prosody rate="+10%">Tom &amp; Jerry &lt;3</prosody></mstts:express-as></voice>');
    expect(text).toBe('Tom & Jerry <3');
    expect(azureSsml('Hi', { voice: 'v', language: 'en-US', settings: {} })).toBe(
      '<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" xmlns:mstts="https://www.w3.org/2001/mstts" xml:lang="en-US"><voice name="v">Hi</voice></speak>',
    );
  });

  it('cancel() on barge-in stops the audio at once and drops queued sentences; the next turn is spoken on a fresh connection', async () => {
    await start({ chunkMs: 20, chunkIntervalMs: 20 });
    const tts = open();
    const r = record(tts);
    await tts.ready;
    tts.startUtterance('long');
    tts.pushText('long', 'This is a long sentence that takes a while to speak out loud.');
    tts.pushText('long', 'And a second one that never gets spoken.');
    await until(() => r.audio.length >= 3);
    tts.cancel('long');
    expect(r.done).toEqual([{ id: 'long', reason: 'cancelled', characters: 101 }]);
    const afterCancel = r.audio.length;
    tts.startUtterance('next');
    tts.pushText('next', 'Sure.');
    tts.endText('next');
    await nextEvent(tts, 'done', (d: { id: string }) => d.id === 'next');
    expect(r.audio.slice(afterCancel).every((a) => a.id === 'next')).toBe(true);
    expect(audioOf(r, 'next').length).toBe(5 * 60 * 8);
    expect(fake.received.syntheses.map((s) => s.text)).toEqual(['This is a long sentence that takes a while to speak out loud.', 'Sure.']);
    await until(() => fake.received.syntheses[0]!.interrupted);
    expect(fake.received.synthesisConnections).toBe(2);
    // The cancelled synthesizer's socket is gone, on both sides; the session closes the other.
    await until(() => fake.openConnections() === 1);
    expect(azureSockets()).toBe(1);
    await tts.close();
    await until(() => fake.openConnections() === 0);
    expect(azureSockets()).toBe(0);
  });

  it('maps a rejected key to a fatal error of the utterance', async () => {
    await start();
    const tts = open({ connection: { key: 'wrong', host: fake.url } });
    const r = record(tts);
    tts.startUtterance('u');
    tts.pushText('u', 'Hello.');
    tts.endText('u');
    await nextEvent(tts, 'done', () => true, 10_000);
    expect(r.done).toEqual([{ id: 'u', reason: 'error', characters: 6 }]);
    await expect(tts.ready).rejects.toThrow('HTTP 401');
    const message = 'Azure Speech rejected the connection: HTTP 401 (check AZURE_SPEECH_KEY and AZURE_SPEECH_REGION / HOST / ENDPOINT)';
    // Once when the session opens (call start), once for the utterance it failed.
    expect(r.errors.map((e) => e.message)).toEqual([message, message]);
    expect(r.errors[0]!.details).toMatchObject({ status: 401, fatal: true });
    expect(r.errors[1]!.details).toMatchObject({ status: 401, fatal: true, utteranceId: 'u' });
  }, 15_000);

  it("maps a voice the service refuses to the utterance's error with Azure's reason", async () => {
    await start({ voices: ['hi-IN-SwaraNeural'] });
    const bad = open({ voice: 'xx-Nobody' });
    const r = record(bad);
    bad.startUtterance('u');
    bad.pushText('u', 'Hello.');
    bad.endText('u');
    await nextEvent(bad, 'done', () => true, 10_000);
    expect(r.done[0]).toMatchObject({ id: 'u', reason: 'error' });
    expect(r.errors[0]!.message).toMatch(/^Azure Speech synthesis failed: .*Unsupported voice xx-Nobody/);
  }, 15_000);

  it('gives up on a sentence that gets no audio within the timeout, with a clear error', async () => {
    await start({ silentSynthesis: true });
    const tts = open({ firstAudioTimeoutMs: 300 });
    const r = record(tts);
    tts.startUtterance('u');
    tts.pushText('u', 'Hello.');
    tts.endText('u');
    await nextEvent(tts, 'done');
    expect(r.done).toEqual([{ id: 'u', reason: 'error', characters: 6 }]);
    expect(r.errors[0]!.message).toBe('Azure Speech synthesis timed out: no audio within 300 ms');
  });

  it('close() closes the socket of a synthesizer that never spoke, as well as one that did, and one still connecting', async () => {
    await start();
    // The SDK's close() left a warm socket that carried no request open (a call ended before its greeting).
    const warm = open();
    await warm.ready;
    expect(fake.openConnections()).toBe(1);
    await warm.close();
    await until(() => fake.openConnections() === 0, 1000);
    const connecting = open();
    await connecting.close();
    const spoke = open();
    spoke.startUtterance('t1');
    spoke.pushText('t1', 'Hello there.');
    spoke.endText('t1');
    await nextEvent(spoke, 'done');
    // The barge-in's fresh synthesizer never speaks before the call ends.
    spoke.startUtterance('t2');
    spoke.pushText('t2', 'A long reply that the caller cuts off before its end.');
    await nextEvent(spoke, 'audio');
    spoke.cancel('t2');
    await spoke.close();
    await until(() => fake.openConnections() === 0, 2000);
    expect(azureSockets()).toBe(0);
  });

  it('its descriptor offers the stream formats and names what is missing', () => {
    expect(descriptor.capabilities.formats).toEqual([MULAW_8K, PCM16_8K, PCM16_16K]);
    expect(descriptor.missing({})).toMatch(/^AZURE_SPEECH_KEY is not set/);
    expect(descriptor.missing({ AZURE_SPEECH_ENDPOINT: 'wss://speech.example.com/tts/cognitiveservices/websocket/v1' })).toBeNull();
  });
});
