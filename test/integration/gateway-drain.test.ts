/**
 * Deploys that drop no call (docs/call-lifecycle.md, "Draining"). Media gateways run as
 * `npm run gateway` processes (src/gateway/main.ts) behind a load balancer that tries the next
 * gateway on a 503 (test/support/upgrade-proxy.ts); each is sent SIGTERM while it holds live phone
 * calls. The API and the call worker run in the test's process, against real PostgreSQL and
 * Temporal; Twilio, Deepgram, Cartesia and the LLM are the protocol fakes.
 */
import type { FakeDeepgram } from '../fakes/deepgram-server';
import type { FakeOpenAI } from '../fakes/openai-server';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { FORCED_STOP_MS } from '../../src/runtime/stop-signals';
import { getFreePort } from '../../src/temporal/dev-server';
import { eventually } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { phoneTurns, type PhoneCall } from '../support/phone-turns';
import { deepgramFake, defaultProviderEnv, FakePool, openaiFake } from '../support/speech-vendors';
import { configureTwilio } from '../support/telephony';
import { startUpgradeProxy, type UpgradeProxy } from '../support/upgrade-proxy';
import { voiceCallApi } from '../support/voice-call-api';
import { killHard, spawnGatewayMain, type GatewayMainProcess } from '../support/worker-process-control';

const ACCOUNT_SID = `AC${'d7'.repeat(16)}`;
const AUTH_TOKEN = 'drain-test-auth-token-0123456789abc';
const OUR_NUMBER = '+15005550006';
const AGENT = 'drain-clinic';
const GREETING = 'Sunrise Clinic.';
const GOODBYE = 'We must end this call now. Goodbye.';

let h: Harness;
let twilio: FakeTwilio;
let deepgram: FakeDeepgram;
let openai: FakeOpenAI;
let proxy: UpgradeProxy;
let speechEnv: Record<string, string>;
const speechFakes = new FakePool();
const gateways: GatewayMainProcess[] = [];

beforeAll(async () => {
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  speechEnv = await defaultProviderEnv(speechFakes);
  deepgram = await deepgramFake(speechFakes);
  openai = await openaiFake(speechFakes);
  proxy = await startUpgradeProxy([]);
  h = await startHarness({ env: { ...speechEnv, TWILIO_API_BASE_URL: twilio.apiBaseUrl, GATEWAY_PUBLIC_URL: proxy.url }, worker: true });
  await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER });
  // Each caller utterance names its call and turn; the reply repeats it, so every turn is traceable.
  openai.setResponder((body) => {
    const last = body.messages[body.messages.length - 1];
    const asked = /call (\w) turn (\d+)/.exec(String(last?.content ?? ''));
    return { content: asked ? `Answer ${asked[1]}${asked[2]}.` : 'Sorry?' };
  });
  await createVoiceAgent({ name: AGENT, prompt: 'You answer questions about the clinic.', greeting: GREETING });
}, 120_000);

afterAll(async () => {
  for (const g of gateways) await killHard(g.child);
  await h?.stop();
  await proxy?.stop();
  await twilio?.stop();
  await speechFakes.stopAll();
});

const { events, finalCall, createVoiceAgent } = voiceCallApi(() => h);
const { inboundCall, ask, heardMs, MS_PER_CHAR } = phoneTurns({ harness: () => h, twilio: () => twilio, deepgram: () => deepgram, agent: AGENT, ourNumber: OUR_NUMBER, greeting: GREETING });

async function startGatewayProcess(env: Record<string, string> = {}): Promise<GatewayMainProcess> {
  const g = await spawnGatewayMain(h, { ...speechEnv, HOST: '127.0.0.1', GATEWAY_PORT: String(await getFreePort()), LOG_LEVEL: 'warn', ...env });
  gateways.push(g);
  return g;
}

async function presence(taskQueue: string): Promise<{ state: string; admitting: boolean; calls: number }> {
  const [rows] = await h.db.sequelize.query(`SELECT state, admitting, calls FROM gateways WHERE id = :taskQueue`, { replacements: { taskQueue } });
  return rows[0] as { state: string; admitting: boolean; calls: number };
}

const admitting = (g: GatewayMainProcess) => eventually(async () => (await presence(g.taskQueue))?.admitting === true);

async function gatewayOf(callId: string): Promise<string> {
  return eventually(async () => (await h.db.models.Call.findByPk(callId))?.get('gateway_id') as string | null);
}

/** SIGTERM, then the gateway says it drains: readiness 503 `draining`, liveness 200, presence not admitting. */
async function drain(g: GatewayMainProcess): Promise<void> {
  g.child.kill('SIGTERM');
  const health = await eventually(async () => {
    const res = await fetch(`http://127.0.0.1:${g.port}/healthz`);
    return res.status === 503 ? ((await res.json()) as { status: string; detail: string }) : null;
  });
  expect(health).toMatchObject({ status: 'draining', detail: expect.stringMatching(/^Draining: taking no new calls/) });
  expect((await fetch(`http://127.0.0.1:${g.port}/livez`)).status).toBe(200);
  // The row is written right after readiness flips (one write at a time, behind any tick's).
  const row = await eventually(async () => {
    const p = await presence(g.taskQueue);
    return p?.state === 'draining' && p;
  }, 5_000);
  expect(row).toMatchObject({ state: 'draining', admitting: false });
}

const within = <T>(promise: Promise<T>, ms: number, what: string) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms).unref())]);

async function eventTypes(callId: string) {
  return (await events(callId)).map((e) => ({ type: e.event_type, data: e.data }));
}

describe('a media gateway told to stop (SIGTERM)', () => {
  let second: GatewayMainProcess;

  it('serves its live calls to their end, sends a new call to another gateway, and exits 0 after its last call', async () => {
    const first = await startGatewayProcess();
    second = await startGatewayProcess();
    proxy.upstreams = [first.url, second.url];
    await admitting(first);
    await admitting(second);
    const a = await inboundCall('+14155550701');
    const b = await inboundCall('+14155550702');
    expect(await gatewayOf(a.callId)).toBe(first.taskQueue);
    expect(await gatewayOf(b.callId)).toBe(first.taskQueue);
    await ask(a, 'A1');
    await ask(b, 'B1');

    await drain(first);
    // A new call is admitted (the other gateway has room); its stream is refused by the draining
    // gateway and taken by the next one.
    const c = await inboundCall('+14155550703');
    expect(await gatewayOf(c.callId)).toBe(second.taskQueue);
    expect(proxy.refused).toContainEqual({ upstream: first.url, status: 503 });

    // The drained gateway's calls go on: answered as before.
    await ask(a, 'A2');
    await ask(b, 'B2');
    await ask(c, 'C1');
    await a.caller.hangup();
    await ask(b, 'B3');
    expect(first.child.exitCode).toBeNull();
    await b.caller.hangup();

    const exit = await within(first.exited, 60_000, 'the drained gateway exiting');
    expect(exit).toMatchObject({ code: 0, signal: null });
    // It left only once its calls had recorded their end.
    for (const call of [a, b]) expect((await h.db.models.Call.findByPk(call.callId))?.get('status')).toBe('completed');
    expect(await presence(first.taskQueue)).toMatchObject({ state: 'stopped' });
    const transcript = async (call: PhoneCall) => {
      const record = await finalCall(call.callId);
      expect(record).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
      return record.transcript.map((t: { text: string }) => t.text);
    };
    expect(await transcript(a)).toEqual([GREETING, 'Question for call A turn 1.', 'Answer A1.', 'Question for call A turn 2.', 'Answer A2.']);
    expect(await transcript(b)).toEqual([
      GREETING,
      ...[1, 2, 3].flatMap((n) => [`Question for call B turn ${n}.`, `Answer B${n}.`]),
    ]);
    for (const call of [a, b]) expect((await eventTypes(call.callId)).filter((e) => e.type === 'error' || e.data?.status === 'drained')).toEqual([]);

    await c.caller.hangup();
    expect(await transcript(c)).toEqual([GREETING, 'Question for call C turn 1.', 'Answer C1.']);
  }, 240_000);

  it('says goodbye to the calls left at the deadline, ends them agent_ended, hangs them up and exits 0; meanwhile the API refuses new calls', async () => {
    // The other gateway holds no call: it stops at once.
    second.child.kill('SIGTERM');
    expect(await within(second.exited, 30_000, 'an idle gateway exiting')).toMatchObject({ code: 0 });

    const g = await startGatewayProcess({ GATEWAY_DRAIN_SECS: '4', GATEWAY_DRAIN_GOODBYE: GOODBYE });
    proxy.upstreams = [g.url];
    await admitting(g);
    const call = await inboundCall('+14155550704');
    await ask(call, 'D1');
    const heardBefore = heardMs(call.caller);

    await drain(g);
    // No gateway has room: a new call is refused before anything is dialled.
    const dialled = twilio.requests.length;
    const refused = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+14155550705', agent_name: AGENT } });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.body.detail).toMatch(/at capacity/);
    expect(twilio.requests.length).toBe(dialled);

    // The deadline passes: the caller hears the goodbye, then the platform ends the call.
    await within(call.caller.closed, 60_000, 'the stream closing at the drain deadline');
    expect(heardMs(call.caller) - heardBefore).toBeGreaterThanOrEqual((GOODBYE.length - 2) * MS_PER_CHAR);
    const record = await finalCall(call.callId, 30_000);
    expect(record).toMatchObject({ status: 'completed', end_reason: 'agent_ended' });
    expect(record.transcript.at(-1)).toMatchObject({ role: 'assistant', text: GOODBYE });
    const trace = await eventTypes(call.callId);
    expect(trace).toContainEqual({ type: 'call_status', data: { status: 'drained', source: 'gateway' } });
    expect(trace).toContainEqual({ type: 'agent_spoke', data: { text: GOODBYE } });
    expect(trace).toContainEqual({ type: 'tts_started', data: { utterance_id: 'drain' } });
    expect(trace.filter((e) => e.type === 'error')).toEqual([]);
    // The provider's call is over.
    const fake = twilio.calls.find((c) => c.from === '+14155550704')!;
    expect((await within(fake.ended, 30_000, 'the Twilio call ending')).status).toBe('completed');

    expect(await within(g.exited, 60_000, 'the drained gateway exiting')).toMatchObject({ code: 0, signal: null });
    expect(await presence(g.taskQueue)).toMatchObject({ state: 'stopped' });
  }, 240_000);

  it('stops at once on a second signal, ending the calls it still holds', async () => {
    const g = await startGatewayProcess();
    proxy.upstreams = [g.url];
    await admitting(g);
    const call = await inboundCall('+14155550706');
    await ask(call, 'E1');
    await drain(g);
    await ask(call, 'E2');

    const secondSignalAt = Date.now();
    g.child.kill('SIGTERM');
    const exit = await within(g.exited, FORCED_STOP_MS + 5000, 'the gateway exiting on a second signal');
    expect(exit).toMatchObject({ code: 128 + 15, signal: null });
    expect(exit.atMs - secondSignalAt).toBeLessThan(FORCED_STOP_MS + 2000);

    // The call is cut, and recorded so at once (the gateway told its workflow), provider hung up.
    const record = await finalCall(call.callId, 30_000);
    expect(record).toMatchObject({ status: 'failed', end_reason: 'error' });
    expect((await eventTypes(call.callId)).filter((e) => e.type === 'error').map((e) => e.data.context)).toEqual(['gateway']);
    const fake = twilio.calls.find((c) => c.from === '+14155550706')!;
    expect((await within(fake.ended, 30_000, 'the Twilio call ending')).status).toBe('completed');
  }, 180_000);
});
