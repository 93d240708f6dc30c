/**
 * The shared reconnecting STT wrapper (src/providers/resilience.ts) around a real adapter and its
 * fake: a vendor drop is survived, a rejection or a vendor that stays down is given up on with
 * `unavailable`.
 */
import { ResilientStt } from '../../src/providers/resilience';
import { createAgentStt, type SttTranscript } from '../../src/providers/stt';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { nextEvent, silenceFrames, toneFrames } from '../support/speech';

const KEY = 'dg-resilience-key';
let fake: FakeDeepgram;
const streams: ResilientStt[] = [];

const resilient = (apiKey = KEY, delaysMs = [0, 20, 40], maxFailures?: number) => {
  const stt = new ResilientStt({
    open: () => createAgentStt({ stt_provider: 'deepgram' }, { DEEPGRAM_API_KEY: apiKey, DEEPGRAM_BASE_URL: fake.url }),
    delaysMs,
    maxFailures,
  });
  streams.push(stt);
  return stt;
};

beforeEach(async () => {
  fake = await startFakeDeepgram({ apiKey: KEY });
});
afterEach(async () => {
  await Promise.all(streams.splice(0).map((s) => s.close()));
  await fake.stop();
});

it('reopens the stream after the vendor drops it and keeps transcribing', async () => {
  fake.script(['Before the drop.', 'After the drop.']);
  const stt = resilient();
  const errors: string[] = [];
  stt.on('error', (e) => errors.push(e.message));
  await stt.ready;
  for (const f of [...toneFrames(300), ...silenceFrames(40)]) stt.sendAudio(f);
  stt.finalize();
  expect((await nextEvent<SttTranscript>(stt, 'transcript', (t) => t.isFinal)).text).toBe('Before the drop.');

  fake.dropConnections(1011, 'Internal server error');
  await nextEvent(stt, 'error');
  // The second stream: audio flows again once it is open.
  await new Promise<void>((resolve) => {
    const poll = setInterval(() => {
      if (fake.received.streams.length === 2) {
        clearInterval(poll);
        resolve();
      }
    }, 5);
  });
  for (const f of [...toneFrames(300), ...silenceFrames(40)]) stt.sendAudio(f);
  stt.finalize();
  expect((await nextEvent<SttTranscript>(stt, 'transcript', (t) => t.isFinal)).text).toBe('After the drop.');
  expect(errors).toEqual(['Deepgram stream closed: 1011 Internal server error']);
  expect(stt.isUnavailable).toBe(false);
  expect(stt.audioBytesSent).toBe(2 * 340 * 8);
});

it('gives up at once on a rejected key: one error, then unavailable and closed', async () => {
  const stt = resilient('wrong-key');
  const errors: string[] = [];
  stt.on('error', (e) => errors.push(e.message));
  const unavailable = nextEvent<Error>(stt, 'unavailable');
  const closed = nextEvent(stt, 'closed');
  expect((await unavailable).message).toBe('Deepgram rejected the connection: HTTP 401 (Invalid credentials.)');
  await closed;
  expect(errors).toHaveLength(1);
  expect(fake.received.rejected).toHaveLength(1);
});

it('gives up when the vendor keeps failing after every retry', async () => {
  const stt = resilient(KEY, [0, 10], 3);
  const errors: string[] = [];
  stt.on('error', (e) => errors.push(e.message));
  await stt.ready;
  const unavailable = nextEvent<Error>(stt, 'unavailable', () => true, 5000);
  // Every connection is dropped as soon as it is seen.
  const dropper = setInterval(() => fake.dropConnections(1011, 'Internal server error'), 5);
  try {
    expect((await unavailable).message).toBe('Deepgram stream closed: 1011 Internal server error (gave up after 3 reconnects)');
  } finally {
    clearInterval(dropper);
  }
  expect(fake.received.streams).toHaveLength(4);
  expect(stt.isUnavailable).toBe(true);
});

it('an adapter that cannot be created (no key) is unavailable with the reason', async () => {
  const stt = new ResilientStt({ open: () => createAgentStt({ stt_provider: 'deepgram' }, {}) });
  streams.push(stt);
  expect((await nextEvent<Error>(stt, 'unavailable')).message).toBe('STT provider deepgram: DEEPGRAM_API_KEY is not set');
  await expect(stt.ready).rejects.toThrow('DEEPGRAM_API_KEY is not set');
});
