/**
 * The Deepgram Aura streaming TTS adapter against the fake Deepgram's `/v1/speak`, over real
 * sockets: auth header and audio format as Deepgram expects them, audio in order, barge-in with
 * Clear, vendor errors and drops as clear messages.
 */
import net from 'node:net';
import { PCM16_16K } from '../../src/audio/format';
import { createAgentTts, type TtsOptions, type TtsSession } from '../../src/providers/tts';
import { DeepgramTts } from '../../src/providers/tts/deepgram';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import type { FakeDeepgramSpeakOptions } from '../fakes/deepgram-speak';
import { synthesize } from '../fakes/fake-tts-audio';
import { audioOf, mulawRms, nextEvent, recordTts, sleep } from '../support/speech';

const API_KEY = 'dg-tts-key';

describe('Deepgram Aura streaming TTS', () => {
  let fake: FakeDeepgram;
  let running = false;
  const sessions: TtsSession[] = [];
  const start = async (speak: FakeDeepgramSpeakOptions = {}) => {
    fake = await startFakeDeepgram({ apiKey: API_KEY, speak });
    running = true;
  };
  const open = (options: Partial<TtsOptions> = {}) => {
    const tts = new DeepgramTts({ apiKey: API_KEY, baseUrl: fake.url, ...options });
    sessions.push(tts);
    return tts;
  };

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    if (running) await fake.stop();
    running = false;
  });

  it('speaks sentence by sentence in the stream format with the Token header; audio in order, then done', async () => {
    await start();
    const tts = open();
    const r = recordTts(tts);
    await tts.ready;
    tts.startUtterance('turn-1');
    tts.pushText('turn-1', 'Hello there.');
    tts.pushText('turn-1', 'How can I help you today?');
    tts.endText('turn-1');
    await nextEvent(tts, 'done');

    expect(r.done).toEqual([{ id: 'turn-1', reason: 'completed', characters: 37 }]);
    expect(r.errors).toEqual([]);
    const first = synthesize('Hello there. ', {}, 0);
    const second = synthesize('How can I help you today? ', {}, first.samples);
    const audio = audioOf(r, 'turn-1');
    expect(audio.equals(Buffer.concat([first.audio, second.audio]))).toBe(true);
    expect(mulawRms(audio)).toBeGreaterThan(3000);
    const conn = fake.speak.connections[0]!;
    expect(conn.headers.authorization).toBe(`Token ${API_KEY}`);
    expect(conn.query).toEqual({ model: 'aura-2-thalia-en', encoding: 'mulaw', sample_rate: '8000' });
    // Each sentence is flushed at once: its audio does not wait for the rest of the reply.
    expect(conn.messages).toEqual([
      { type: 'Speak', text: 'Hello there. ' },
      { type: 'Flush' },
      { type: 'Speak', text: 'How can I help you today? ' },
      { type: 'Flush' },
    ]);
  });

  it('asks for 16-bit PCM at 16 kHz for such a stream; voice names the Aura model; tts_settings add parameters', async () => {
    await start();
    const tts = createAgentTts(
      { tts_provider: 'deepgram', voice: 'aura-2-andromeda-en', tts_settings: { mip_opt_out: true, encoding: 'alaw' } },
      { DEEPGRAM_API_KEY: API_KEY, DEEPGRAM_BASE_URL: fake.url },
      { format: PCM16_16K },
    );
    sessions.push(tts);
    const r = recordTts(tts);
    tts.startUtterance('u1');
    tts.pushText('u1', 'Namaste.');
    tts.endText('u1');
    await nextEvent(tts, 'done');
    expect(fake.speak.connections[0]!.query).toEqual({ model: 'aura-2-andromeda-en', encoding: 'linear16', sample_rate: '16000', mip_opt_out: 'true' });
    // 8 characters × 60 ms at 16 kHz, 2 bytes a sample.
    expect(audioOf(r, 'u1').length).toBe(8 * 60 * 16 * 2);
  });

  it('barge-in: cancel sends Clear, no audio of the cancelled utterance arrives afterwards, the next one speaks', async () => {
    await start({ chunkMs: 20, chunkIntervalMs: 5 });
    const tts = open();
    const r = recordTts(tts);
    await tts.ready;
    tts.startUtterance('long');
    tts.pushText('long', 'This is a rather long answer that the caller will interrupt halfway through.');
    tts.endText('long');
    await nextEvent(tts, 'audio');
    tts.cancel('long');
    expect(r.done).toEqual([{ id: 'long', reason: 'cancelled', characters: 76 }]);
    const cancelledAt = r.audio.length;
    tts.startUtterance('next');
    tts.pushText('next', 'Sure.');
    tts.endText('next');
    await nextEvent(tts, 'done', (d: { id: string }) => d.id === 'next');
    expect(r.audio.slice(cancelledAt).every((a) => a.id === 'next')).toBe(true);
    expect(audioOf(r, 'next').length).toBe(5 * 60 * 8);
    expect(audioOf(r, 'long').length).toBeLessThan(76 * 60 * 8);
    expect(fake.speak.connections[0]!.clears).toBe(1);
    expect(fake.speak.connections).toHaveLength(1);
  });

  it('a rejected key and an unknown voice are errors with the HTTP status and Deepgram message; the utterance ends in error', async () => {
    await start({ models: ['aura-2-thalia-en'] });
    const bad = open({ apiKey: 'wrong' });
    const err = await nextEvent<Error & { details: Record<string, unknown> }>(bad, 'error');
    expect(err.message).toBe('Deepgram TTS rejected the connection: HTTP 401 (Invalid credentials.)');
    expect(err.details).toMatchObject({ status: 401, fatal: true });

    const tts = open({ voice: 'aura-2-nobody-en' });
    const voiceErr = await nextEvent<Error>(tts, 'error');
    expect(voiceErr.message).toBe('Deepgram TTS rejected the connection: HTTP 400 (No such model: aura-2-nobody-en)');
    const r = recordTts(tts);
    tts.startUtterance('u1');
    tts.pushText('u1', 'Hello.');
    await nextEvent(tts, 'done');
    expect(r.done).toEqual([{ id: 'u1', reason: 'error', characters: 6 }]);
    expect(r.errors[0]).toMatchObject({ details: { utteranceId: 'u1', status: 400 } });
  });

  it('an Error message from Deepgram ends that utterance with the message; the session goes on', async () => {
    await start({ errorText: '\u0007' });
    const tts = open();
    const r = recordTts(tts);
    await tts.ready;
    tts.startUtterance('u1');
    tts.pushText('u1', 'Bad \u0007 input.');
    tts.endText('u1');
    await nextEvent(tts, 'done');
    expect(r.done).toEqual([{ id: 'u1', reason: 'error', characters: 12 }]);
    expect(r.errors.map((e) => e.message)).toEqual(['Deepgram TTS error: Text could not be synthesised.']);
    tts.startUtterance('u2');
    tts.pushText('u2', 'Fine.');
    tts.endText('u2');
    await nextEvent(tts, 'done', (d: { id: string }) => d.id === 'u2');
    expect(r.done.at(-1)).toEqual({ id: 'u2', reason: 'completed', characters: 5 });
  });

  it('a dropped connection fails the utterance in flight with a clear message and reconnects for the next', async () => {
    await start({ chunkMs: 20, chunkIntervalMs: 20 });
    const tts = open();
    const r = recordTts(tts);
    await tts.ready;
    tts.startUtterance('u1');
    tts.pushText('u1', 'A long sentence that will be cut off by the outage.');
    tts.endText('u1');
    await nextEvent(tts, 'audio');
    fake.dropConnections(1011, 'Internal error');
    await nextEvent(tts, 'done');
    expect(r.done).toEqual([{ id: 'u1', reason: 'error', characters: 51 }]);
    expect(r.errors[0]!.message).toBe('Deepgram TTS connection closed (1011 Internal error)');
    await sleep(50);
    tts.startUtterance('u2');
    tts.pushText('u2', 'Back.');
    tts.endText('u2');
    await nextEvent(tts, 'done', (d: { id: string }) => d.id === 'u2');
    expect(r.done.at(-1)).toEqual({ id: 'u2', reason: 'completed', characters: 5 });
    expect(fake.speak.connections).toHaveLength(2);
  });

  it('a vendor that never answers the handshake is a timeout error; the utterance ends in error', async () => {
    const silent = net.createServer(() => {}); // accepts TCP, never answers the upgrade
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const tts = new DeepgramTts({ apiKey: API_KEY, baseUrl: `ws://127.0.0.1:${(silent.address() as net.AddressInfo).port}`, handshakeTimeoutMs: 100 });
      sessions.push(tts);
      const r = recordTts(tts);
      tts.startUtterance('u1');
      tts.pushText('u1', 'Hello.');
      await nextEvent(tts, 'done');
      expect(r.done).toEqual([{ id: 'u1', reason: 'error', characters: 6 }]);
      expect(r.errors[0]!.message).toBe('Deepgram TTS connection failed: Opening handshake has timed out');
      await tts.close();
    } finally {
      silent.close();
    }
  });

  it('close() sends Close and the socket ends', async () => {
    await start();
    const tts = open();
    await tts.ready;
    await tts.close();
    expect(fake.speak.messages).toEqual([{ type: 'Close' }]);
  });
});
