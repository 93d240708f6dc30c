/**
 * Calls ride through a Temporal outage (docs/call-lifecycle.md). A Temporal dev server of this
 * file's own, its state on disk (`--db-filename`), is SIGKILLed while two phone calls are live and
 * their callers keep talking; it restarts on the same state. The worker and the media gateway run
 * as separate processes, the API in the test's; Twilio, Deepgram, Cartesia and the LLM are the
 * protocol fakes. Every turn must be answered while Temporal is away and recorded once after.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getFreePort, startDevServer, type DevServer } from '../../src/temporal/dev-server';
import { startFakeCartesia, type FakeCartesia } from '../fakes/cartesia-server';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { startHarness, type Harness } from '../support/harness';
import { phoneTurns } from '../support/phone-turns';
import { configureTwilio } from '../support/telephony';
import { voiceCallApi } from '../support/voice-call-api';
import { killHard, spawnGatewayProcess, spawnWorkerProcess } from '../support/worker-process-control';
import { speechFakesEnv } from '../support/voice-stack';

const ACCOUNT_SID = `AC${'5e'.repeat(16)}`;
const AUTH_TOKEN = 'outage-test-auth-token-0123456789ab';
const OUR_NUMBER = '+15005550006';
const GREETING = 'Sunrise Clinic.';

let h: Harness;
let temporal: DevServer;
let temporalPort: number;
let dbFile: string;
let twilio: FakeTwilio;
let deepgram: FakeDeepgram;
let cartesia: FakeCartesia;
let openai: FakeOpenAI;
let worker: ChildProcess;
let gateway: ChildProcess;
let vendorEnv: Record<string, string>;

const startTemporal = () =>
  startDevServer({ cliPath: process.env.VAP_TEST_TEMPORAL_CLI!, port: temporalPort, dbFile, headless: true });

beforeAll(async () => {
  temporalPort = await getFreePort();
  dbFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vap-outage-')), 'temporal.db');
  temporal = await startTemporal();
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  deepgram = await startFakeDeepgram({ apiKey: 'dg-key' });
  cartesia = await startFakeCartesia({ apiKey: 'ca-key' });
  openai = await startFakeOpenAI();
  const gatewayPort = await getFreePort();
  vendorEnv = {
    TWILIO_API_BASE_URL: twilio.apiBaseUrl,
    GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}`,
    GATEWAY_PORT: String(gatewayPort),
    ...speechFakesEnv(deepgram, cartesia, openai),
  };
  h = await startHarness({ env: { ...vendorEnv, TEMPORAL_ADDRESS: temporal.address } });
  worker = await spawnWorkerProcess(h, vendorEnv);
  gateway = (await spawnGatewayProcess(h, vendorEnv)).child;
  await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER });
  // Each caller utterance names its call and turn; the reply repeats it, so every turn is traceable.
  openai.setResponder((body) => {
    const last = body.messages[body.messages.length - 1];
    const asked = /call (\w) turn (\d+)/.exec(String(last?.content ?? ''));
    return { content: asked ? `Answer ${asked[1]}${asked[2]}.` : 'Sorry?' };
  });
  await createVoiceAgent({ name: 'outage-clinic', prompt: 'You answer questions about the clinic.', greeting: GREETING });
}, 180_000);

afterAll(async () => {
  await killHard(worker);
  await killHard(gateway);
  await h?.stop();
  await temporal?.stop();
  await Promise.all([twilio?.stop(), deepgram?.stop(), cartesia?.stop(), openai?.stop()]);
});

const { events, finalCall, createVoiceAgent } = voiceCallApi(() => h);
const { inboundCall, ask } = phoneTurns({ harness: () => h, twilio: () => twilio, deepgram: () => deepgram, agent: 'outage-clinic', ourNumber: OUR_NUMBER, greeting: GREETING });

async function transcriptOf(callId: string): Promise<string[]> {
  const call = await finalCall(callId, 60_000);
  expect(call).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
  return call.transcript.map((t: { text: string }) => t.text);
}

const expectedTranscript = (label: string, turns: number[]) => [
  GREETING,
  ...turns.flatMap((n) => [`Question for call ${label} turn ${n}.`, `Answer ${label}${n}.`]),
];

async function rideThroughOutage(outageMs: number, duringOutage?: () => Promise<void>): Promise<void> {
  const a = await inboundCall('+14155550501');
  const b = await inboundCall('+14155550502');
  await ask(a, 'A1');
  await ask(b, 'B1');

  const killedAt = Date.now();
  await killHard(temporal.process);
  // Armed before the outage: answered as always.
  await ask(a, 'A2');
  await ask(b, 'B2');
  // Nothing armed any more: the gateway answers alone.
  await ask(a, 'A3');
  await ask(b, 'B3');
  await duringOutage?.();
  const left = outageMs - (Date.now() - killedAt);
  if (left > 0) await new Promise((r) => setTimeout(r, left));
  temporal = await startTemporal();

  // Back: the calls go on as before.
  await ask(a, 'A4');
  await ask(b, 'B4');
  await a.caller.hangup();
  await b.caller.hangup();

  expect(await transcriptOf(a.callId)).toEqual(expectedTranscript('A', [1, 2, 3, 4]));
  expect(await transcriptOf(b.callId)).toEqual(expectedTranscript('B', [1, 2, 3, 4]));
  for (const callId of [a.callId, b.callId]) {
    const list = await events(callId);
    expect(list.filter((e) => e.event_type === 'error')).toEqual([]);
    expect(list.filter((e) => e.event_type === 'user_spoke')).toHaveLength(4);
    expect(list.filter((e) => e.event_type === 'agent_spoke')).toHaveLength(5);
    expect(list.filter((e) => e.event_type === 'llm_usage')).toHaveLength(4);
    // In the order they happened, whatever order they reached the workflow in.
    const spoken = list.filter((e) => e.event_type === 'user_spoke').map((e) => Date.parse(`${e.timestamp}Z`));
    expect([...spoken].sort((x, y) => x - y)).toEqual(spoken);
  }
}

describe('a Temporal outage during live calls', () => {
  it('drops no call and loses or doubles no turn when Temporal is away for 10 s; meanwhile the API says so at once', async () => {
    await rideThroughOutage(10_000, async () => {
      const health = await fetch(`${h.api.url}/healthz`);
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({ temporal: 'down', database: 'ok' });
      // A call that needs Temporal to start: 503 with Retry-After within seconds, not a hang.
      const startedAt = Date.now();
      const dialled = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+14155550599', agent_name: 'outage-clinic' } });
      expect(Date.now() - startedAt).toBeLessThan(5_000);
      expect(dialled.status).toBe(503);
      expect(dialled.headers.get('retry-after')).toBe('5');
      expect(dialled.body.detail).toMatch(/temporal|workflow/i);
      // A caller ringing in meanwhile hears an apology; the attempt is in the call list, failed.
      const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/outage-clinic`, from: '+14155550598', to: OUR_NUMBER });
      expect(fake.verbs?.map((v) => v.verb)).toEqual(['Say', 'Hangup']);
      const row = (await h.db.models.Call.findOne({ where: { phone_number: '+14155550598' } }))!.get({ plain: true });
      expect(row).toMatchObject({ status: 'failed', end_reason: 'error' });
      // What needs only PostgreSQL still answers.
      expect((await h.request('GET', '/api/calls')).status).toBe(200);
    });
  }, 180_000);

  it('drops no call and loses or doubles no turn when Temporal is away for 60 s', async () => {
    await rideThroughOutage(60_000);
  }, 240_000);

  it('finds a gateway that died while Temporal was down once Temporal is back: its call ends failed, once', async () => {
    const a = await inboundCall('+14155550511');
    await ask(a, 'A1');
    await killHard(temporal.process);
    await killHard(gateway);
    await a.caller.closed;
    await new Promise((r) => setTimeout(r, 5_000));
    const backAt = Date.now();
    temporal = await startTemporal();
    const call = await finalCall(a.callId, 60_000);
    expect(call).toMatchObject({ status: 'failed', end_reason: 'error' });
    // Liveness (3 s), the watchdog's signal once Temporal answers, the probe nobody picks up (5 s).
    expect(Date.now() - backAt).toBeLessThan(30_000);
    const errors = (await events(a.callId)).filter((e) => e.event_type === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.data).toMatchObject({ context: 'gateway' });
    expect(errors[0]!.data.message).toMatch(/media gateway lost/);
    expect(call.transcript.map((t: { text: string }) => t.text)).toEqual(expectedTranscript('A', [1]));
    gateway = (await spawnGatewayProcess(h, vendorEnv)).child;
  }, 120_000);

  it('carries a call through Temporal and the call worker restarting together', async () => {
    const a = await inboundCall('+14155550521');
    await ask(a, 'A1');
    await Promise.all([killHard(temporal.process), killHard(worker)]);
    await ask(a, 'A2'); // armed before
    await ask(a, 'A3'); // answered by the gateway alone
    await new Promise((r) => setTimeout(r, 3_000));
    [temporal, worker] = await Promise.all([startTemporal(), spawnWorkerProcess(h, vendorEnv)]);
    await ask(a, 'A4');
    await a.caller.hangup();
    expect(await transcriptOf(a.callId)).toEqual(expectedTranscript('A', [1, 2, 3, 4]));
    expect((await events(a.callId)).filter((e) => e.event_type === 'error')).toEqual([]);
  }, 180_000);
});
