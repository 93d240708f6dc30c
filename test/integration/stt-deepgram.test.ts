/**
 * The Deepgram streaming STT adapter against the local Deepgram fake, over real sockets.
 */
import { createAgentStt, sttProblem, type SttOptions, type SttStream, type SttTranscript } from '../../src/providers/stt';
import { DeepgramStt } from '../../src/providers/stt/deepgram';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { nextEvent, silenceFrames, sleep, toneFrames } from '../support/speech';

const API_KEY = 'dg-test-key';

describe('Deepgram streaming STT', () => {
  let fake: FakeDeepgram;
  const streams: SttStream[] = [];
  const open = (options: Partial<SttOptions> = {}) => {
    const stt = new DeepgramStt({ apiKey: API_KEY, baseUrl: fake.url, ...options });
    streams.push(stt);
    return stt;
  };

  beforeEach(async () => {
    fake = await startFakeDeepgram({ apiKey: API_KEY, noAudioTimeoutMs: 2000 });
  });
  afterEach(async () => {
    await Promise.all(streams.splice(0).map((s) => s.close()));
    await fake.stop();
  });

  it('reports a rejected API key as an error event with the HTTP status and Deepgram message', async () => {
    const stt = open({ apiKey: 'wrong-key' });
    const closed = nextEvent(stt, 'closed');
    const err = await nextEvent<Error & { details: { status?: number; fatal?: boolean } }>(stt, 'error');
    expect(err.message).toBe('Deepgram rejected the connection: HTTP 401 (Invalid credentials.)');
    expect(err.details).toMatchObject({ status: 401, fatal: true });
    await expect(stt.ready).rejects.toThrow('HTTP 401');
    await closed;
    expect(fake.received.rejected).toEqual([{ status: 401, reason: 'Invalid credentials.' }]);
  });

  it('streams caller audio (queued until the socket opens) and answers finalize() with the scripted final transcript', async () => {
    fake.script(['I would like to book a table for two.']);
    const stt = open();
    const transcripts: SttTranscript[] = [];
    stt.on('transcript', (t) => transcripts.push(t));
    const speechStarted = nextEvent(stt, 'speechStarted');
    const final = nextEvent<SttTranscript>(stt, 'transcript', (t) => t.isFinal);

    // Sent before the handshake finished: nothing may be lost.
    const audio = [...toneFrames(1200), ...silenceFrames(100)];
    for (const frame of audio) stt.sendAudio(frame);
    stt.finalize();

    expect(await final).toMatchObject({ text: 'I would like to book a table for two.', isFinal: true, speechFinal: true, fromFinalize: true, confidence: 0.99 });
    expect((await speechStarted).timestampSecs).toBe(0);
    // Interim results carried the words heard so far, before the final.
    const interims = transcripts.filter((t) => !t.isFinal).map((t) => t.text);
    expect(interims).toEqual(['I', 'I would']);
    expect(stt.audioBytesSent).toBe(1300 * 8);
    expect(fake.received.audioBytes).toBe(1300 * 8);
    expect(fake.received.controls).toEqual(['Finalize']);
    expect(fake.received.streams[0]!.query).toEqual({
      model: 'nova-3',
      language: 'en',
      encoding: 'mulaw',
      sample_rate: '8000',
      channels: '1',
      interim_results: 'true',
      endpointing: '300',
      utterance_end_ms: '1000',
      vad_events: 'true',
      smart_format: 'true',
    });
    expect(fake.received.streams[0]!.headers.authorization).toBe(`Token ${API_KEY}`);
  });

  it('ends an utterance on endpointing silence by itself; a later finalize() with no new speech does not use up the script', async () => {
    fake.script(['Hello.', 'Goodbye.']);
    const stt = open();
    await stt.ready;
    const finals: SttTranscript[] = [];
    stt.on('transcript', (t) => t.isFinal && finals.push(t));
    const utteranceEnd = nextEvent<{ lastWordEndSecs: number }>(stt, 'utteranceEnd');

    for (const frame of [...toneFrames(400), ...silenceFrames(1100)]) stt.sendAudio(frame);
    await nextEvent(stt, 'transcript', (t: SttTranscript) => t.isFinal);
    expect((await utteranceEnd).lastWordEndSecs).toBe(0.4);
    stt.finalize();
    await nextEvent(stt, 'transcript', (t: SttTranscript) => t.fromFinalize);
    for (const frame of toneFrames(300)) stt.sendAudio(frame);
    stt.finalize();
    await nextEvent(stt, 'transcript', (t: SttTranscript) => t.text === 'Goodbye.');

    expect(finals.map((f) => [f.text, f.speechFinal, f.fromFinalize])).toEqual([
      ['Hello.', true, false],
      ['', true, true],
      ['Goodbye.', true, true],
    ]);
  });

  it('keeps a silent stream alive with KeepAlive messages past the no-audio timeout', async () => {
    await fake.stop();
    fake = await startFakeDeepgram({ apiKey: API_KEY, noAudioTimeoutMs: 300 });
    const stt = open({ keepAliveIntervalMs: 100 });
    const errors: Error[] = [];
    stt.on('error', (e) => errors.push(e));
    await stt.ready;
    await sleep(1000);
    expect(errors).toEqual([]);
    expect(fake.received.streams[0]!.closed).toBeUndefined();
    expect(fake.received.controls.filter((c) => c === 'KeepAlive').length).toBeGreaterThanOrEqual(4);
  });

  it("surfaces Deepgram's no-audio timeout (NET-0001) as an error when KeepAlive is not sent in time", async () => {
    await fake.stop();
    fake = await startFakeDeepgram({ apiKey: API_KEY, noAudioTimeoutMs: 200 });
    const stt = open({ keepAliveIntervalMs: 60_000 });
    const closed = nextEvent<{ code: number }>(stt, 'closed');
    const err = await nextEvent<Error>(stt, 'error');
    expect(err.message).toMatch(/^Deepgram stream closed: 1011 .*net0001/);
    expect((await closed).code).toBe(1011);
  });

  it('reports a stream Deepgram drops with error and closed events', async () => {
    const stt = open();
    await stt.ready;
    const closed = nextEvent<{ code: number }>(stt, 'closed');
    const err = nextEvent<Error>(stt, 'error');
    fake.dropConnections(1011, 'Internal server error');
    expect((await err).message).toBe('Deepgram stream closed: 1011 Internal server error');
    expect((await closed).code).toBe(1011);
  });

  it('close() flushes the speech in flight as a final transcript, then ends the stream cleanly', async () => {
    fake.script(['Thanks, bye.']);
    const stt = open();
    const events: string[] = [];
    stt.on('transcript', (t) => t.isFinal && events.push(`final:${t.text}`));
    stt.on('closed', ({ code }) => events.push(`closed:${code}`));
    for (const frame of toneFrames(300)) stt.sendAudio(frame);
    await stt.ready;
    await stt.close();
    expect(events).toEqual(['final:Thanks, bye.', 'closed:1000']);
    expect(fake.received.controls).toEqual(['CloseStream']);
    // Audio after close goes nowhere and does not throw.
    stt.sendAudio(toneFrames(20)[0]!);
    stt.finalize();
  });

  it("builds the request from the agent's fields; stt_settings add parameters, override defaults and null removes one", async () => {
    const stt = createAgentStt(
      {
        stt_provider: 'deepgram',
        stt_model: 'nova-2-phonecall',
        stt_language: 'hi',
        stt_settings: { keyterm: ['Acme', 'Zed'], smart_format: false, utterance_end_ms: null, endpointing: 500 },
      },
      { DEEPGRAM_API_KEY: API_KEY, DEEPGRAM_BASE_URL: fake.url },
    );
    streams.push(stt);
    await stt.ready;
    const params = new URLSearchParams(fake.received.streams[0]!.url.split('?')[1]);
    expect(params.get('model')).toBe('nova-2-phonecall');
    expect(params.get('language')).toBe('hi');
    expect(params.getAll('keyterm')).toEqual(['Acme', 'Zed']);
    expect(params.get('smart_format')).toBe('false');
    expect(params.get('endpointing')).toBe('500');
    expect(params.has('utterance_end_ms')).toBe(false);
  });

  it('accepts an http:// base URL as well as ws://', async () => {
    fake.script(['Yes.']);
    const stt = open({ baseUrl: fake.url.replace('ws://', 'http://') + '/' });
    for (const frame of toneFrames(200)) stt.sendAudio(frame);
    stt.finalize();
    expect((await nextEvent<SttTranscript>(stt, 'transcript', (t) => t.isFinal)).text).toBe('Yes.');
  });

  it('refuses an unknown provider and a missing API key with clear messages', () => {
    expect(() => createAgentStt({ stt_provider: 'whisperx' }, {})).toThrow('STT provider whisperx: unknown provider (known: deepgram, openai, azure, sarvam)');
    expect(sttProblem({ stt_provider: 'deepgram' }, { DEEPGRAM_API_KEY: undefined })).toBe('DEEPGRAM_API_KEY is not set');
    expect(() => createAgentStt({ stt_provider: 'deepgram' }, { DEEPGRAM_BASE_URL: 'wss://api.deepgram.com' })).toThrow(
      'STT provider deepgram: DEEPGRAM_API_KEY is not set',
    );
  });
});
