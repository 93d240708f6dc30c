/**
 * Every registered speech adapter holds a real phone call: for each STT vendor of the registry
 * (with Cartesia speaking) and each TTS vendor (with Deepgram listening), the fake Twilio rings
 * the API, the real media gateway and call workflow run the call, and the vendor's fake (from
 * test/support/speech-vendors.ts) transcribes or speaks. A vendor joins this test by registering
 * its adapter and adding its fake to that table.
 *
 * Also here, because it needs the same whole call: an STT that goes down mid-call and stays down
 * ends the call `failed` with `end_reason: error` and an `error` event naming the provider.
 */
import path from 'node:path';
import { startGateway, type RunningGateway } from '../../src/gateway/server';
import { STT_VENDORS } from '../../src/providers/stt/registry';
import { TTS_VENDORS } from '../../src/providers/tts/registry';
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { setLogLevel } from '../../src/shared/logger';
import { getFreePort } from '../../src/temporal/dev-server';
import type { FakeOpenAI } from '../fakes/openai-server';
import { FRAME_MS, type TwilioCaller } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { createAgent, eventually } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { deepgramFake, FakePool, openaiFake, STT_FAKES, TTS_FAKES, type RunningSttFake } from '../support/speech-vendors';
import { configureTwilio } from '../support/telephony';

const HELLO_WAV = path.join(__dirname, '..', 'fixtures', 'audio', 'hello-appointment.wav');
const ACCOUNT_SID = `AC${'6b'.repeat(16)}`;
const AUTH_TOKEN = 'providers-test-auth-token-0123456';
const OUR_NUMBER = '+15005550006';
const GREETING = 'Hello, clinic here.';
const QUESTION = 'I would like to book an appointment for tomorrow.';
const ANSWER = 'Nine or eleven tomorrow morning.';

let h: Harness;
let twilio: FakeTwilio;
let gateway: RunningGateway;
let llm: FakeOpenAI;
const pool = new FakePool();
const stt = new Map<string, RunningSttFake>();

beforeAll(async () => {
  setLogLevel('error');
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  let env: Record<string, string> = {};
  for (const vendor of STT_VENDORS) {
    const fake = await STT_FAKES[vendor.name]!(pool);
    stt.set(vendor.name, fake);
    env = { ...env, ...fake.env };
  }
  for (const vendor of TTS_VENDORS) env = { ...env, ...(await TTS_FAKES[vendor.name]!(pool)).env };
  llm = await openaiFake(pool);
  const gatewayPort = await getFreePort();
  h = await startHarness({
    worker: true,
    env: { ...env, OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: env.OPENAI_API_KEY ?? 'sk-test', TWILIO_API_BASE_URL: twilio.apiBaseUrl, GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}` },
  });
  gateway = await startGateway(
    h.gatewayDeps(),
    gatewayPort,
    '127.0.0.1',
  );
  await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }, { twilio_max_concurrent: 5 });
}, 180_000);

afterAll(async () => {
  await gateway?.stop();
  await h?.stop();
  await Promise.all([twilio?.stop(), pool.stopAll()]);
});

const heardMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;
const events = async (callId: string): Promise<Array<{ event_type: string; data: any }>> => (await h.request('GET', `/api/calls/${callId}/events`)).body;

async function ring(agentName: string, from: string) {
  const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/${agentName}`, from, to: OUR_NUMBER });
  expect(fake.errors).toEqual([]);
  const verb = fake.verbs![0]!;
  if (verb.verb !== 'Connect') throw new Error(`expected <Connect>, got ${fake.twiml}`);
  return { caller: fake.caller!, callId: verb.stream.parameters.call_id! };
}

/** Greeting heard, one question transcribed and answered in audio, hang-up: the call completes. */
async function oneVoiceCall(agent: { name: string; stt_provider: string; tts_provider: string }, from: string, sttFake: RunningSttFake) {
  await createAgent(h.db, h.box, { ...agent, greeting: GREETING, pipeline_settings: { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 } });
  sttFake.script([QUESTION]);
  llm.enqueue({ content: ANSWER });
  const { caller, callId } = await ring(agent.name, from);

  await eventually(async () => heardMs(caller) >= 500, 15_000, 20);
  await eventually(async () => (await events(callId)).some((e) => e.event_type === 'agent_spoke'), 10_000, 50);
  const before = heardMs(caller);
  await caller.say(HELLO_WAV);
  await eventually(async () => (await events(callId)).filter((e) => e.event_type === 'agent_spoke').length >= 2, 20_000, 50);
  await eventually(async () => heardMs(caller) >= before + 1000, 15_000, 20);
  await caller.hangup();

  const call = await eventually(async () => {
    const c = (await h.request('GET', `/api/calls/${callId}`)).body;
    return c.status === 'completed' && c;
  }, 15_000);
  expect(call).toMatchObject({ end_reason: 'user_ended' });
  const list = await events(callId);
  expect(list.filter((e) => e.event_type === 'user_spoke').map((e) => e.data.text)).toEqual([QUESTION]);
  expect(list.filter((e) => e.event_type === 'agent_spoke').map((e) => e.data.text)).toEqual([GREETING, ANSWER]);
  expect(list.filter((e) => e.event_type === 'error')).toEqual([]);
  const usage = list.filter((e) => e.event_type === 'tts_usage').map((e) => e.data);
  expect(usage.every((u) => u.provider === agent.tts_provider)).toBe(true);
  expect(usage.reduce((n, u) => n + u.characters, 0)).toBe(GREETING.length + ANSWER.length);
}

// One call per vendor, side by side (at most jest's maxConcurrency, 5, at a time): each scripts
// its fakes before it speaks, and every call asks and is answered the same, so the shared fakes'
// queues serve them in any order.
it.concurrent.each(STT_VENDORS.map((v) => v.name))('STT %s transcribes the caller in a whole phone call', async (name) => {
  await oneVoiceCall({ name: `stt-${name}`, stt_provider: name, tts_provider: 'cartesia' }, '+14155550201', stt.get(name)!);
}, 90_000);

it.concurrent.each(TTS_VENDORS.map((v) => v.name))('TTS %s speaks to the caller in a whole phone call', async (name) => {
  await oneVoiceCall({ name: `tts-${name}`, stt_provider: 'deepgram', tts_provider: name }, '+14155550202', stt.get('deepgram')!);
}, 90_000);

describe('an STT that goes down mid-call and stays down', () => {
  it('is retried, then the call ends failed with end_reason error and an error event naming the provider', async () => {
    const deepgram = await deepgramFake(pool);
    await createAgent(h.db, h.box, { name: 'stt-outage', greeting: GREETING, stt_provider: 'deepgram', tts_provider: 'cartesia' });
    const { caller, callId } = await ring('stt-outage', '+14155550299');
    await eventually(async () => (await events(callId)).some((e) => e.event_type === 'agent_spoke'), 10_000, 50);
    const streamsBefore = deepgram.received.streams.length;
    deepgram.outage(true);
    try {
      const call = await eventually(async () => {
        const c = (await h.request('GET', `/api/calls/${callId}`)).body;
        return c.status === 'failed' && c;
      }, 25_000, 100);
      expect(call).toMatchObject({ status: 'failed', end_reason: 'error' });
    } finally {
      deepgram.outage(false);
    }
    const errors = (await events(callId)).filter((e) => e.event_type === 'error').map((e) => e.data);
    // The drop, each refused reconnect, then giving up, which ends the call.
    expect(errors[0]).toMatchObject({ message: 'Deepgram stream closed: 1011 Service unavailable' });
    expect(errors.filter((e) => /HTTP 503/.test(e.message)).length).toBeGreaterThanOrEqual(4);
    expect(errors.at(-1)).toMatchObject({ context: 'stt', message: expect.stringMatching(/^STT provider deepgram: Deepgram rejected the connection: HTTP 503 .*\(gave up after 5 reconnects\)$/) });
    expect(deepgram.received.streams.length).toBe(streamsBefore);
    await caller.closed;
  }, 60_000);
});
