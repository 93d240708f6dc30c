/**
 * The Cartesia streaming TTS adapter against the local Cartesia fake, over real sockets.
 */
import { createAgentTts, ttsProblem, type TtsOptions, type TtsSession } from '../../src/providers/tts';
import { CartesiaTts } from '../../src/providers/tts/cartesia';
import { startFakeCartesia, type FakeCartesia, type FakeCartesiaOptions } from '../fakes/cartesia-server';
import { synthesize } from '../fakes/fake-tts-audio';
import { mulawRms, nextEvent, sleep, until } from '../support/speech';

const API_KEY = 'cartesia-test-key';

interface Recorded {
  audio: Array<{ id: string; audio: Buffer; at: number }>;
  done: Array<{ id: string; reason: string; characters: number }>;
  errors: Error[];
}

function record(tts: TtsSession): Recorded {
  const r: Recorded = { audio: [], done: [], errors: [] };
  tts.on('audio', (a) => r.audio.push({ ...a, at: performance.now() }));
  tts.on('done', (d) => r.done.push(d));
  tts.on('error', (e) => r.errors.push(e));
  return r;
}

const audioOf = (r: Recorded, id: string) => Buffer.concat(r.audio.filter((a) => a.id === id).map((a) => a.audio));

describe('Cartesia streaming TTS', () => {
  let fake: FakeCartesia;
  let running = false;
  const sessions: TtsSession[] = [];
  const start = async (fakeOptions: Partial<FakeCartesiaOptions> = {}) => {
    fake = await startFakeCartesia({ apiKey: API_KEY, ...fakeOptions });
    running = true;
  };
  const open = (options: Partial<TtsOptions> = {}) => {
    const tts = new CartesiaTts({ apiKey: API_KEY, baseUrl: fake.url, voice: 'voice-1', ...options });
    sessions.push(tts);
    return tts;
  };

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    if (running) await fake.stop();
    running = false;
  });

  it('reports a rejected API key as an error event with the HTTP status', async () => {
    await start();
    const tts = open({ apiKey: 'wrong-key' });
    const err = await nextEvent<Error & { details: { status?: number; fatal?: boolean } }>(tts, 'error');
    expect(err.message).toBe('Cartesia rejected the connection: HTTP 401 (Invalid API key)');
    expect(err.details).toMatchObject({ status: 401, fatal: true });
    await expect(tts.ready).rejects.toThrow('HTTP 401');
    // An utterance on the broken session fails with its own error and done, not silence.
    const r = record(tts);
    tts.startUtterance('u1');
    tts.pushText('u1', 'Hello.');
    await nextEvent(tts, 'done');
    expect(r.done).toEqual([{ id: 'u1', reason: 'error', characters: 6 }]);
    expect(r.errors[0]).toMatchObject({ details: { utteranceId: 'u1', status: 401 } });
  });

  it('speaks a reply sentence by sentence: audio in order with the expected duration, then done with the character count', async () => {
    await start();
    const tts = open({ model: 'sonic-3', language: 'en' });
    const r = record(tts);
    await tts.ready;
    tts.startUtterance('turn-1');
    tts.pushText('turn-1', 'Hello there.');
    tts.pushText('turn-1', 'How can I help you today?');
    tts.endText('turn-1');
    await nextEvent(tts, 'done');

    expect(r.done).toEqual([{ id: 'turn-1', reason: 'completed', characters: 37 }]);
    expect(tts.charactersSent).toBe(37);
    expect(r.errors).toEqual([]);
    // 60 ms of tone per character; the separating space Cartesia needs is not speech.
    const audio = audioOf(r, 'turn-1');
    expect(audio.length).toBe((12 + 25) * 60 * 8);
    const first = synthesize('Hello there.', {}, 0);
    const second = synthesize(' How can I help you today?', {}, first.samples);
    expect(audio.equals(Buffer.concat([first.audio, second.audio]))).toBe(true);
    expect(mulawRms(audio)).toBeGreaterThan(3000);
    expect(r.audio.length).toBeGreaterThan(2);

    const requests = fake.received.messages;
    expect(requests.map((m) => [m.transcript, m.continue])).toEqual([
      ['Hello there.', true],
      [' How can I help you today?', true],
      ['', false],
    ]);
    expect(requests[0]).toEqual({
      max_buffer_delay_ms: 0,
      model_id: 'sonic-3',
      voice: { mode: 'id', id: 'voice-1' },
      output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 },
      language: 'en',
      context_id: 'turn-1',
      transcript: 'Hello there.',
      continue: true,
    });
    expect(fake.received.connections[0]!.headers).toMatchObject({ 'x-api-key': API_KEY, 'cartesia-version': '2026-03-01' });
  });

  it('requests audio for the first sentence at once, before the rest of the reply exists', async () => {
    await start();
    const tts = open();
    const r = record(tts);
    await tts.ready;
    tts.startUtterance('u1');
    tts.pushText('u1', 'One moment please.');
    await nextEvent(tts, 'audio');
    expect(r.done).toEqual([]);
    tts.pushText('u1', 'Let me check.');
    tts.endText('u1');
    await nextEvent(tts, 'done');
    expect(audioOf(r, 'u1').length).toBe((18 + 13) * 60 * 8);
  });

  it('sends text given before the connection is open as soon as it opens', async () => {
    await start();
    const tts = open();
    const r = record(tts);
    tts.startUtterance('greeting');
    tts.pushText('greeting', 'Hi, this is Ava.');
    tts.endText('greeting');
    await nextEvent(tts, 'done');
    expect(r.done).toEqual([{ id: 'greeting', reason: 'completed', characters: 16 }]);
    expect(audioOf(r, 'greeting').length).toBe(16 * 60 * 8);
  });

  it('cancel() stops the audio of an utterance at once; the session goes on with the next turn', async () => {
    await start({ chunkMs: 20, chunkIntervalMs: 10 });
    const tts = open();
    const r = record(tts);
    await tts.ready;
    tts.startUtterance('long');
    tts.pushText('long', 'This is a rather long answer that the caller is going to interrupt halfway through.');
    await nextEvent(tts, 'audio', (a: { id: string }) => a.id === 'long');
    await sleep(50);
    const cancelledAt = performance.now();
    tts.cancel('long');
    expect(r.done).toEqual([{ id: 'long', reason: 'cancelled', characters: 83 }]);
    await until(() => fake.received.contexts.get('long')!.cancelled);
    const chunksAfterCancel = fake.received.contexts.get('long')!.chunksSent;
    await sleep(150);

    expect(r.audio.filter((a) => a.id === 'long' && a.at > cancelledAt)).toEqual([]);
    expect(fake.received.messages.at(-1)).toEqual({ context_id: 'long', cancel: true });
    const context = fake.received.contexts.get('long')!;
    expect(context.cancelled).toBe(true);
    expect(context.chunksSent).toBe(chunksAfterCancel); // the fake stopped generating too
    expect(context.chunksSent).toBeLessThan((83 * 60) / 20);

    tts.startUtterance('next');
    tts.pushText('next', 'Sure.');
    tts.endText('next');
    await nextEvent(tts, 'done', (d: { id: string }) => d.id === 'next');
    expect(audioOf(r, 'next').length).toBe(5 * 60 * 8);
    expect(fake.received.connections).toHaveLength(1);
    expect(r.errors).toEqual([]);
  });

  it('reconnects by itself when Cartesia closes an idle connection, so the next turn still finds it warm', async () => {
    await start({ idleTimeoutMs: 150 });
    const tts = open();
    const r = record(tts);
    await tts.ready;
    await sleep(400);
    expect(fake.received.connections.length).toBeGreaterThanOrEqual(2);
    tts.startUtterance('u1');
    tts.pushText('u1', 'Still here.');
    tts.endText('u1');
    await nextEvent(tts, 'done');
    expect(r.done).toEqual([{ id: 'u1', reason: 'completed', characters: 11 }]);
    expect(r.errors).toEqual([]);
  });

  it('fails the utterance in flight when the connection drops, and serves the next turn on a new connection', async () => {
    await start({ chunkMs: 20, chunkIntervalMs: 10 });
    const tts = open();
    const r = record(tts);
    await tts.ready;
    tts.startUtterance('u1');
    tts.pushText('u1', 'This answer will be cut off by an outage.');
    await nextEvent(tts, 'audio');
    fake.dropConnections(1011, 'Internal server error');
    await nextEvent(tts, 'done');
    expect(r.done).toEqual([{ id: 'u1', reason: 'error', characters: 41 }]);
    expect(r.errors.map((e) => [e.message, (e as any).details.utteranceId])).toEqual([['Cartesia connection closed (1011 Internal server error)', 'u1']]);

    tts.startUtterance('u2');
    tts.pushText('u2', 'Back again.');
    tts.endText('u2');
    await nextEvent(tts, 'done', (d: { id: string }) => d.id === 'u2');
    expect(r.done.at(-1)).toEqual({ id: 'u2', reason: 'completed', characters: 11 });
    expect(fake.received.connections).toHaveLength(2);
  });

  it('maps the agent fields and tts_settings onto the request', async () => {
    await start();
    const tts = createAgentTts(
      {
        tts_provider: 'cartesia',
        tts_model: 'sonic-2',
        voice: 'agent-voice',
        tts_language: 'hi',
        tts_settings: { speed: 1.1, emotion: 'calm', add_timestamps: true, cartesia_version: '2025-04-16' },
      },
      { CARTESIA_API_KEY: API_KEY, CARTESIA_BASE_URL: fake.url, ELEVENLABS_API_KEY: undefined, ELEVENLABS_BASE_URL: 'wss://api.elevenlabs.io' },
    );
    sessions.push(tts);
    tts.startUtterance('u1');
    tts.pushText('u1', 'Namaste.');
    tts.endText('u1');
    await nextEvent(tts, 'done');
    expect(fake.received.messages[0]).toMatchObject({
      model_id: 'sonic-2',
      voice: { mode: 'id', id: 'agent-voice' },
      language: 'hi',
      add_timestamps: true,
      generation_config: { speed: 1.1, emotion: 'calm' },
    });
    expect(fake.received.connections[0]!.headers['cartesia-version']).toBe('2025-04-16');
  });

  it('refuses an unknown provider and a missing API key with clear messages', () => {
    expect(() => createAgentTts({ tts_provider: 'nope' }, {})).toThrow('TTS provider nope: unknown provider (known: cartesia, elevenlabs, deepgram, openai, azure)');
    expect(ttsProblem({ tts_provider: 'cartesia' }, { CARTESIA_BASE_URL: 'wss://x' })).toBe('CARTESIA_API_KEY is not set');
    expect(() => createAgentTts({ tts_provider: 'cartesia' }, { CARTESIA_API_KEY: undefined, CARTESIA_BASE_URL: 'wss://x' })).toThrow(
      'TTS provider cartesia: CARTESIA_API_KEY is not set',
    );
  });
});
