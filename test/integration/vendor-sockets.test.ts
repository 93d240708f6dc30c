/**
 * Vendor connections are capacity too: vendors cap concurrent connections per account, so a call
 * holds only the sockets it uses and leaves none behind. Real API, worker, media gateway and
 * Temporal; calls rung by the fake Twilio; ElevenLabs and Cartesia speaking, Deepgram and Sarvam
 * listening, each through its fake, which counts the connections open on its side.
 *
 * While calls are up, each holds one socket per vendor (ElevenLabs: one, the next turn's spare,
 * once its reply's audio is complete), plus one ready session per voice for the next call; the
 * gateway's `voice_vendor_sockets` agrees with what the vendors see. When the calls end nothing is
 * left: a voice's ready session goes with its last call (test/integration/call-end-sockets.test.ts
 * checks every end path); one no call takes within GATEWAY_TTS_SPARE_SECS is closed while calls are
 * still up, and the gateway's stop closes whatever is open.
 */
import path from 'node:path';
import type { RunningGateway } from '../../src/gateway/server';
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { setLogLevel } from '../../src/shared/logger';
import type { FakeCartesia } from '../fakes/cartesia-server';
import type { FakeDeepgram } from '../fakes/deepgram-server';
import { startFakeElevenLabs, type FakeElevenLabs } from '../fakes/elevenlabs-server';
import type { FakeOpenAI } from '../fakes/openai-server';
import { startFakeSarvam, type FakeSarvam } from '../fakes/sarvam-server';
import { FRAME_MS, type TwilioCaller } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { createAgent, eventually } from '../support/fixtures';
import type { Harness } from '../support/harness';
import { startVoiceStack, type VoiceStack } from '../support/voice-stack';
import { configureTwilio } from '../support/telephony';

const HELLO_WAV = path.join(__dirname, '..', 'fixtures', 'audio', 'hello-appointment.wav');
const ACCOUNT_SID = `AC${'5c'.repeat(16)}`;
const AUTH_TOKEN = 'vendor-sockets-auth-token-01234567';
const OUR_NUMBER = '+15005550006';
const GREETING = 'Hello, clinic here.';
const QUESTION = 'I would like to book an appointment for tomorrow.';
const ANSWER = 'Nine or eleven tomorrow morning.';
// Ready sessions no call takes are closed after this long, even while calls are up (the test waits it out once).
const SPARE_SECS = 20;

let h: Harness;
let twilio: FakeTwilio;
let gateway: RunningGateway;
let gatewayPort: number;
let llm: FakeOpenAI;
let elevenlabs: FakeElevenLabs;
let cartesia: FakeCartesia;
let deepgram: FakeDeepgram;
let sarvam: FakeSarvam;
let stack: VoiceStack;

beforeAll(async () => {
  setLogLevel('error');
  [twilio, elevenlabs, sarvam] = await Promise.all([
    startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN }),
    startFakeElevenLabs({ apiKey: 'el-key' }),
    startFakeSarvam({ apiKey: 'sv-key' }),
  ]);
  const configure = (h: Harness) => configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }, { twilio_max_concurrent: 10 });
  stack = await startVoiceStack({
    telephony: [{ fake: twilio, env: { TWILIO_API_BASE_URL: twilio.apiBaseUrl }, configure }],
    env: {
      ELEVENLABS_API_KEY: 'el-key',
      ELEVENLABS_BASE_URL: elevenlabs.url,
      SARVAM_API_KEY: 'sv-key',
      SARVAM_BASE_URL: sarvam.url,
      GATEWAY_TTS_SPARE_SECS: String(SPARE_SECS),
    },
    alsoStop: [elevenlabs, sarvam],
  });
  ({ h, openai: llm, cartesia, deepgram, gatewayPort } = stack);
  gateway = stack.gateway!;
  llm.enqueue(...Array.from({ length: 5 }, () => ({ content: ANSWER })));
  deepgram.script(() => QUESTION);
  sarvam.script(() => QUESTION);
  const pipeline_settings = { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 };
  await createAgent(h.db, h.box, { name: 'sockets-el', greeting: GREETING, stt_provider: 'deepgram', tts_provider: 'elevenlabs', pipeline_settings });
  await createAgent(h.db, h.box, { name: 'sockets-ca', greeting: GREETING, stt_provider: 'sarvam', tts_provider: 'cartesia', pipeline_settings });
}, 180_000);

afterAll(() => stack?.stop());

const heardMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;
const events = async (callId: string): Promise<Array<{ event_type: string; data: any }>> => (await h.request('GET', `/api/calls/${callId}/events`)).body;
const spoke = async (callId: string, n: number) => (await events(callId)).filter((e) => e.event_type === 'agent_spoke').length >= n;

/** `voice_vendor_sockets` as the gateway's /metrics shows it: "vendor/kind" → count. */
async function gauge(): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${gatewayPort}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^voice_vendor_sockets\{vendor="([^"]+)",kind="([^"]+)"\} (\S+)$/gm)) out[`${m[1]}/${m[2]}`] = Number(m[3]);
  return out;
}

/** What each vendor sees open now, in the gauge's terms. */
function vendorsSee(): Record<string, number> {
  return { elevenlabs: elevenlabs.openConnections(), cartesia: cartesia.openConnections(), deepgram: deepgram.openConnections(), sarvam: sarvam.openConnections() };
}

/** The gauge summed per vendor (all kinds). */
async function gaugeByVendor(): Promise<Record<string, number>> {
  const out: Record<string, number> = { elevenlabs: 0, cartesia: 0, deepgram: 0, sarvam: 0 };
  for (const [key, n] of Object.entries(await gauge())) out[key.split('/')[0]!] = (out[key.split('/')[0]!] ?? 0) + n;
  return out;
}

/** Waits until the gauge and the vendors agree on `expected` (both are read repeatedly: sockets settle). */
async function settlesAt(expected: { vendors: Record<string, number>; kinds: Record<string, number> }, timeoutMs = 15_000): Promise<void> {
  let last: unknown;
  try {
    await eventually(async () => {
      const [byVendor, kinds] = [await gaugeByVendor(), await gauge()];
      last = { vendors: vendorsSee(), gauge: byVendor, kinds };
      const kindsMatch = Object.entries(expected.kinds).every(([k, n]) => (kinds[k] ?? 0) === n);
      return JSON.stringify(vendorsSee()) === JSON.stringify(expected.vendors) && JSON.stringify(byVendor) === JSON.stringify(expected.vendors) && kindsMatch;
    }, timeoutMs, 50);
  } catch (err) {
    throw new Error(`vendor sockets did not settle at ${JSON.stringify(expected)}; last seen ${JSON.stringify(last)}`);
  }
}

async function ring(agentName: string, from: string) {
  const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/${agentName}`, from, to: OUR_NUMBER });
  expect(fake.errors).toEqual([]);
  const verb = fake.verbs![0]!;
  if (verb.verb !== 'Connect') throw new Error(`expected <Connect>, got ${fake.twiml}`);
  return { caller: fake.caller!, callId: verb.stream.parameters.call_id! };
}

async function hangUpAndComplete(call: { caller: TwilioCaller; callId: string }): Promise<void> {
  await call.caller.hangup();
  const record = await eventually(async () => {
    const c = (await h.request('GET', `/api/calls/${call.callId}`)).body;
    return c.status === 'completed' && c;
  }, 20_000);
  expect(record).toMatchObject({ end_reason: 'user_ended' });
  expect((await events(call.callId)).filter((e) => e.event_type === 'error')).toEqual([]);
}

describe('vendor sockets', () => {
  it('a call holds one socket per vendor while up, plus one ready session per voice; after N calls end no socket is left, and the gauge agrees with the vendors', async () => {
    const calls = await Promise.all([
      ring('sockets-el', '+14155550301'),
      ring('sockets-el', '+14155550302'),
      ring('sockets-el', '+14155550303'),
      ring('sockets-ca', '+14155550304'),
      ring('sockets-ca', '+14155550305'),
    ]);
    await Promise.all(calls.map(({ caller, callId }) => eventually(async () => heardMs(caller) >= 500 && (await spoke(callId, 1)), 20_000, 50)));
    // Greetings done: per call its STT stream and one TTS socket, plus one ready session per voice.
    await settlesAt({ vendors: { elevenlabs: 4, cartesia: 3, deepgram: 3, sarvam: 2 }, kinds: { 'elevenlabs/tts': 3, 'elevenlabs/tts_spare': 1, 'cartesia/tts': 2, 'cartesia/tts_spare': 1, 'deepgram/stt': 3, 'sarvam/stt': 2 } });

    // One turn each, then every caller hangs up.
    await Promise.all(
      calls.map(async ({ caller, callId }) => {
        const before = heardMs(caller);
        await caller.say(HELLO_WAV);
        await eventually(async () => spoke(callId, 2), 25_000, 50);
        await eventually(async () => heardMs(caller) > before + 500, 15_000, 20);
      }),
    );
    await Promise.all(calls.map(hangUpAndComplete));

    // Nothing is left: no call's socket outlives its call, and each voice's ready session went with its last call.
    await settlesAt({ vendors: { elevenlabs: 0, cartesia: 0, deepgram: 0, sarvam: 0 }, kinds: { 'elevenlabs/tts': 0, 'elevenlabs/tts_spare': 0, 'cartesia/tts': 0, 'cartesia/tts_spare': 0 } });
    // Every ElevenLabs socket carried a synthesis but at most one per call (its next turn's spare,
    // closed at hang-up) and the ready session no call took (closed with the last call).
    const conns = elevenlabs.received.connections;
    expect(conns.filter((c) => !c.closed)).toEqual([]);
    expect(conns.every((c) => c.query.inactivity_timeout === '60')).toBe(true);
    expect(conns.filter((c) => c.generations.length > 0)).toHaveLength(6); // 3 greetings, 3 answers
    expect(conns.filter((c) => c.generations.length === 0).length).toBeLessThanOrEqual(4);
  }, 150_000);

  it('closes a ready session no call took within GATEWAY_TTS_SPARE_SECS, while a call of its voice is still up', async () => {
    const call = await ring('sockets-el', '+14155550306');
    await eventually(async () => heardMs(call.caller) >= 500 && (await spoke(call.callId, 1)), 20_000, 50);
    await settlesAt({ vendors: { elevenlabs: 2, cartesia: 0, deepgram: 1, sarvam: 0 }, kinds: { 'elevenlabs/tts': 1, 'elevenlabs/tts_spare': 1 } });
    // The call holds its own sockets only, once the ready session has idled out.
    await settlesAt({ vendors: { elevenlabs: 1, cartesia: 0, deepgram: 1, sarvam: 0 }, kinds: { 'elevenlabs/tts': 1, 'elevenlabs/tts_spare': 0 } }, (SPARE_SECS + 10) * 1000);
    await hangUpAndComplete(call);
    await settlesAt({ vendors: { elevenlabs: 0, cartesia: 0, deepgram: 0, sarvam: 0 }, kinds: { 'elevenlabs/tts': 0 } });
  }, 90_000);

  it('leaves no vendor socket open once the gateway has stopped, with a call up', async () => {
    const call = await ring('sockets-el', '+14155550307');
    await eventually(async () => heardMs(call.caller) >= 500 && (await spoke(call.callId, 1)), 20_000, 50);
    await settlesAt({ vendors: { elevenlabs: 2, cartesia: 0, deepgram: 1, sarvam: 0 }, kinds: { 'elevenlabs/tts': 1, 'elevenlabs/tts_spare': 1 } });

    await gateway.stop();
    await eventually(async () => Object.values(vendorsSee()).every((n) => n === 0), 5000, 20);
    expect(elevenlabs.received.connections.every((c) => c.closed)).toBe(true);
  }, 60_000);
});
