/**
 * The ElevenLabs streaming TTS adapter against the local ElevenLabs fake, over real sockets.
 */
import { createAgentTts, type TtsOptions, type TtsSession } from '../../src/providers/tts';
import { ElevenLabsTts } from '../../src/providers/tts/elevenlabs';
import { startFakeElevenLabs, type FakeElevenLabs, type FakeElevenLabsOptions } from '../fakes/elevenlabs-server';
import { synthesize } from '../fakes/fake-tts-audio';
import { mulawRms, nextEvent, sleep, until } from '../support/speech';
import { openVendorSockets } from '../../src/providers/socket-census';

const API_KEY = 'xi-test-key';

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

const vendorSockets = (vendor: string, kind: string) => openVendorSockets().find((c) => c.vendor === vendor && c.kind === kind)?.count ?? 0;

const audioOf = (r: Recorded, id: string) => Buffer.concat(r.audio.filter((a) => a.id === id).map((a) => a.audio));

describe('ElevenLabs streaming TTS', () => {
  let fake: FakeElevenLabs;
  let running = false;
  const sessions: TtsSession[] = [];
  const start = async (fakeOptions: Partial<FakeElevenLabsOptions> = {}) => {
    fake = await startFakeElevenLabs({ apiKey: API_KEY, voiceIds: ['voice-1', 'agent-voice'], ...fakeOptions });
    running = true;
  };
  const open = (options: Partial<TtsOptions> = {}) => {
    const tts = new ElevenLabsTts({ apiKey: API_KEY, baseUrl: fake.url, voice: 'voice-1', ...options });
    sessions.push(tts);
    return tts;
  };

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    if (running) await fake.stop();
    running = false;
  });

  it('reports a rejected API key as an error event when the session opens, not at the first sentence', async () => {
    await start();
    const tts = open({ apiKey: 'wrong-key' });
    const err = await nextEvent<Error & { details: { closeCode?: number } }>(tts, 'error');
    expect(err.message).toBe('ElevenLabs error: Invalid API key');
    expect(err.details.closeCode).toBe(1008);
    // No reconnect loop: the broken spare is not reopened behind our back.
    await sleep(100);
    expect(fake.received.connections).toHaveLength(1);
  });

  it('speaks a reply sentence by sentence: audio in order with the expected duration, isFinal → done with the character count', async () => {
    await start();
    const tts = open({ model: 'eleven_flash_v2_5', language: 'en', settings: { stability: 0.4, similarity_boost: 0.8 } });
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
    const audio = audioOf(r, 'turn-1');
    expect(audio.length).toBe((12 + 25) * 60 * 8);
    const first = synthesize('Hello there.', {}, 0);
    const second = synthesize('How can I help you today?', {}, first.samples);
    expect(audio.equals(Buffer.concat([first.audio, second.audio]))).toBe(true);
    expect(mulawRms(audio)).toBeGreaterThan(3000);

    const conn = fake.received.connections[0]!;
    expect(conn.voiceId).toBe('voice-1');
    expect(conn.query).toEqual({ model_id: 'eleven_flash_v2_5', output_format: 'ulaw_8000', inactivity_timeout: '60', auto_mode: 'true', language_code: 'en' });
    expect(conn.headers['xi-api-key']).toBe(API_KEY);
    expect(conn.messages).toEqual([
      { text: ' ', voice_settings: { stability: 0.4, similarity_boost: 0.8 } },
      { text: 'Hello there. ', flush: true },
      { text: 'How can I help you today? ', flush: true },
      { text: '' },
    ]);
    expect(conn.generations).toEqual(['Hello there. ', 'How can I help you today? ']);
    expect(conn.closed).toMatchObject({ code: 1000, by: 'server' });
  });

  it('keeps a warm spare connection: no turn waits for a handshake, and the next spare opens when a reply’s audio is complete', async () => {
    await start({ chunkMs: 20, chunkIntervalMs: 10 });
    const tts = open();
    const r = record(tts);
    await tts.ready;
    await until(() => fake.received.connections[0]?.messages.length === 1); // the spare is initialised
    expect(fake.received.connections).toHaveLength(1);
    expect(vendorSockets('elevenlabs', 'tts')).toBe(1);

    tts.startUtterance('u1');
    tts.pushText('u1', 'First answer.');
    await nextEvent(tts, 'audio');
    expect(fake.received.connections).toHaveLength(1); // u1 used the spare
    tts.endText('u1');
    // While its audio is being made the session holds that one socket: no spare yet.
    await sleep(30);
    expect(r.done).toEqual([]);
    expect(fake.received.connections).toHaveLength(1);
    await nextEvent(tts, 'done');
    await until(() => fake.openConnections() === 1 && fake.received.connections.length === 2);
    // Counted as the vendor sees it, once the new socket's handshake has reached our side too (the
    // fake sees the connection a moment before the client's `open`; a CI run read the gauge between).
    await until(() => vendorSockets('elevenlabs', 'tts') === 1);
    expect(fake.openConnections()).toBe(1);

    tts.startUtterance('u2');
    tts.pushText('u2', 'Second answer.');
    tts.endText('u2');
    await nextEvent(tts, 'done');
    expect(fake.received.connections[1]!.generations).toEqual(['Second answer. ']);
    expect(r.done.map((d) => [d.id, d.reason])).toEqual([
      ['u1', 'completed'],
      ['u2', 'completed'],
    ]);
  });

  it('cancel() stops the audio of an utterance at once by dropping its connection', async () => {
    await start({ chunkMs: 20, chunkIntervalMs: 10 });
    const tts = open();
    const r = record(tts);
    await tts.ready;
    tts.startUtterance('long');
    tts.pushText('long', 'This is a rather long answer that the caller is going to interrupt halfway through.');
    await nextEvent(tts, 'audio');
    await sleep(50);
    const cancelledAt = performance.now();
    tts.cancel('long');
    expect(r.done).toEqual([{ id: 'long', reason: 'cancelled', characters: 83 }]);
    const conn = fake.received.connections[0]!;
    await until(() => conn.closed !== undefined);
    const chunksAfterCancel = conn.chunksSent;
    await sleep(150);

    expect(r.audio.filter((a) => a.at > cancelledAt)).toEqual([]);
    expect(conn.closed).toMatchObject({ by: 'client' });
    expect(conn.chunksSent).toBe(chunksAfterCancel);
    expect(conn.chunksSent).toBeLessThan((83 * 60) / 20);

    // The next turn runs on the spare opened at cancel time.
    tts.startUtterance('next');
    tts.pushText('next', 'Sure.');
    tts.endText('next');
    await nextEvent(tts, 'done', (d: { id: string }) => d.id === 'next');
    expect(audioOf(r, 'next').length).toBe(5 * 60 * 8);
    expect(r.errors).toEqual([]);
  });

  it('replaces a spare that ElevenLabs closed for inactivity without reporting an error', async () => {
    await start({ inactivityTimeoutMs: 1100 });
    const tts = open();
    const r = record(tts);
    await tts.ready;
    await sleep(1500);
    expect(fake.received.connections.length).toBe(2);
    expect(fake.received.connections[0]!.closed).toMatchObject({ code: 1008, by: 'server' });
    tts.startUtterance('u1');
    tts.pushText('u1', 'Still here.');
    tts.endText('u1');
    await nextEvent(tts, 'done');
    expect(r.done).toEqual([{ id: 'u1', reason: 'completed', characters: 11 }]);
    expect(r.errors).toEqual([]);
  });

  it('fails the utterance in flight when its connection drops; the next turn runs normally', async () => {
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
    expect(r.errors.map((e) => [e.message, (e as any).details.utteranceId])).toEqual([
      ['ElevenLabs closed the connection (1011 Internal server error) before the audio was complete', 'u1'],
    ]);

    tts.startUtterance('u2');
    tts.pushText('u2', 'Back again.');
    tts.endText('u2');
    await nextEvent(tts, 'done', (d: { id: string }) => d.id === 'u2');
    expect(r.done.at(-1)).toEqual({ id: 'u2', reason: 'completed', characters: 11 });
    expect(r.errors).toHaveLength(1);
  });

  it('fails an utterance with an error and done when the voice does not exist', async () => {
    await start();
    const tts = createAgentTts(
      { tts_provider: 'elevenlabs', voice: 'no-such-voice', tts_settings: {} },
      { CARTESIA_API_KEY: undefined, CARTESIA_BASE_URL: 'wss://x', ELEVENLABS_API_KEY: API_KEY, ELEVENLABS_BASE_URL: fake.url },
    );
    sessions.push(tts);
    const sessionError = await nextEvent<Error>(tts, 'error');
    expect(sessionError.message).toBe('ElevenLabs error: A voice with the voice_id no-such-voice was not found.');
    const r = record(tts);
    tts.startUtterance('u1');
    tts.pushText('u1', 'Hello.');
    await nextEvent(tts, 'done');
    expect(r.done).toEqual([{ id: 'u1', reason: 'error', characters: 6 }]);
    expect(r.errors[0]).toMatchObject({ message: 'ElevenLabs error: A voice with the voice_id no-such-voice was not found.', details: { utteranceId: 'u1' } });
  });

  it('close() leaves ElevenLabs no socket: a spare still connecting, an idle spare, an utterance mid-audio', async () => {
    await start({ chunkMs: 20, chunkIntervalMs: 20 });
    const connecting = open();
    await connecting.close();
    await sleep(50);
    const before = fake.received.connections.length; // the connecting one may not have reached the fake
    const idle = open();
    await until(() => fake.received.connections.length === before + 1 && fake.received.connections[before]!.messages.length === 1); // initialised, no generation
    await idle.close();
    const speaking = open();
    speaking.startUtterance('u1');
    speaking.pushText('u1', 'A reply long enough to be cut off by the end of the call.');
    await nextEvent(speaking, 'audio');
    await speaking.close();
    await until(() => fake.openConnections() === 0, 1000);
    expect(fake.received.connections.every((c) => c.closed?.by === 'client')).toBe(true);
    expect(vendorSockets('elevenlabs', 'tts')).toBe(0);
  });

  it('an utterance ended without text completes at once without audio', async () => {
    await start();
    const tts = open();
    const r = record(tts);
    tts.startUtterance('empty');
    tts.endText('empty');
    await nextEvent(tts, 'done');
    expect(r.done).toEqual([{ id: 'empty', reason: 'completed', characters: 0 }]);
    expect(r.audio).toEqual([]);
  });
});
