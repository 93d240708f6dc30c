/**
 * More than one media gateway (docs/call-lifecycle.md, docs/deployment.md "Scaling out"): two
 * gateway processes and two call workers against one Temporal server and one PostgreSQL, a load
 * balancer in front of the gateways spreading the calls' streams (test/support/tcp-proxy.ts, which
 * skips a target that refuses connections). One gateway is SIGKILLed: only its calls end `failed`
 * (the provider is told to hang up), the other gateway's calls carry on untouched, and new calls
 * go to the surviving gateway.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { getFreePort } from '../../src/temporal/dev-server';
import { startFakeCartesia, type FakeCartesia } from '../fakes/cartesia-server';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { FRAME_MS, type TwilioCaller } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { eventually } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { configureTwilio } from '../support/telephony';
import { startTcpBalancer, type TcpBalancer } from '../support/tcp-proxy';
import { voiceCallApi } from '../support/voice-call-api';
import { killHard, spawnGatewayProcess, spawnWorkerProcess } from '../support/worker-process-control';
import { speechFakesEnv } from '../support/voice-stack';

const HELLO_WAV = path.join(__dirname, '..', 'fixtures', 'audio', 'hello-appointment.wav');
const ACCOUNT_SID = `AC${'6b'.repeat(16)}`;
const AUTH_TOKEN = 'multi-gateway-auth-token-0123456789';
const OUR_NUMBER = '+15005550006';
const MS_PER_CHAR = 60;
const GREETING = 'Two gateways.';
const ANSWER = 'Yes, we open at nine.';

let h: Harness;
let twilio: FakeTwilio;
let deepgram: FakeDeepgram;
let cartesia: FakeCartesia;
let openai: FakeOpenAI;
let balancer: TcpBalancer;
const workers: ChildProcess[] = [];
const gateways: Array<{ child: ChildProcess; taskQueue: string; port: number }> = [];

beforeAll(async () => {
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  deepgram = await startFakeDeepgram({ apiKey: 'dg-key' });
  cartesia = await startFakeCartesia({ apiKey: 'ca-key' });
  openai = await startFakeOpenAI();
  openai.setResponder(() => ({ content: ANSWER }));
  deepgram.script(() => 'Do you open early?');
  const ports = [await getFreePort(), await getFreePort()];
  balancer = await startTcpBalancer(ports.map((port) => ({ host: '127.0.0.1', port })));
  const vendorEnv = {
    TWILIO_API_BASE_URL: twilio.apiBaseUrl,
    GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${balancer.port}`,
    ...speechFakesEnv(deepgram, cartesia, openai),
  };
  h = await startHarness({ env: vendorEnv });
  for (let i = 0; i < 2; i++) workers.push(await spawnWorkerProcess(h, vendorEnv));
  for (const port of ports) {
    const g = await spawnGatewayProcess(h, { ...vendorEnv, GATEWAY_PORT: String(port) });
    gateways.push({ child: g.child, taskQueue: g.taskQueue, port });
  }
  await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER });
  await createVoiceAgent({ name: 'twin-clinic', prompt: 'You answer questions.', greeting: GREETING });
}, 180_000);

afterAll(async () => {
  for (const w of workers) await killHard(w);
  for (const g of gateways) await killHard(g.child);
  await h?.stop();
  await balancer?.stop();
  await Promise.all([twilio?.stop(), deepgram?.stop(), cartesia?.stop(), openai?.stop()]);
});

const { events, finalCall, createVoiceAgent } = voiceCallApi(() => h);
const heardMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;

async function call(from: string) {
  const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/twin-clinic`, from, to: OUR_NUMBER });
  const verb = fake.verbs![0]!;
  if (verb.verb !== 'Connect') throw new Error(`expected <Connect>, got ${fake.twiml}`);
  const caller = fake.caller!;
  await eventually(async () => heardMs(caller) >= (GREETING.length - 2) * MS_PER_CHAR, 20_000, 20);
  const callId = verb.stream.parameters.call_id!;
  const gatewayId = await eventually(async () => (await h.db.models.Call.findByPk(callId))?.get('gateway_id') as string | null, 10_000);
  return { caller, callId, gatewayId, providerCallId: fake.sid };
}

async function ask(caller: TwilioCaller): Promise<void> {
  const before = heardMs(caller);
  await caller.say(HELLO_WAV);
  await eventually(async () => heardMs(caller) >= before + (ANSWER.length - 2) * MS_PER_CHAR, 20_000, 20);
}

describe('two media gateways behind a load balancer', () => {
  it('spreads calls over both; a killed gateway fails only its own calls; new calls go to the survivor', async () => {
    const calls: Array<Awaited<ReturnType<typeof call>>> = [];
    for (let i = 0; i < 4; i++) calls.push(await call(`+1415555070${i}`));
    const onGateway = (g: number) => calls.filter((c) => c.gatewayId === gateways[g]!.taskQueue);
    expect(onGateway(0)).toHaveLength(2);
    expect(onGateway(1)).toHaveLength(2);
    for (const c of calls) await ask(c.caller);

    const [doomed, survivor] = [onGateway(0), onGateway(1)];
    const killedAt = Date.now();
    await killHard(gateways[0]!.child);
    for (const c of doomed) {
      const ended = await finalCall(c.callId, 30_000);
      expect(ended).toMatchObject({ status: 'failed', end_reason: 'error' });
      const errors = (await events(c.callId)).filter((e) => e.event_type === 'error');
      expect(errors).toHaveLength(1);
      expect(errors[0]!.data.message).toMatch(/media gateway lost/);
      // The provider's leg is hung up through its REST API, so nobody waits on a dead line.
      await eventually(async () => twilio.call(c.providerCallId)?.status === 'completed', 15_000);
    }
    expect(Date.now() - killedAt).toBeLessThan(20_000);

    // The other gateway's calls never noticed.
    for (const c of survivor) {
      await ask(c.caller);
      expect((await h.request('GET', `/api/calls/${c.callId}`)).body.status).toBe('in_progress');
    }
    // A new call reaches the survivor (the balancer skips the dead one) and is answered.
    const fresh = await call('+14155550709');
    expect(fresh.gatewayId).toBe(gateways[1]!.taskQueue);
    await ask(fresh.caller);

    for (const c of [...survivor, fresh]) {
      await c.caller.hangup();
      const ended = await finalCall(c.callId, 20_000);
      expect(ended).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
      expect((await events(c.callId)).filter((e) => e.event_type === 'error')).toEqual([]);
    }
  }, 240_000);
});
