/**
 * GET /metrics after a real voice call: the API in this process, the call worker and the media
 * gateway in their own processes (the gateway with METRICS_TOKEN), the Twilio, Deepgram, Cartesia
 * and OpenAI fakes. The caller hears the greeting, asks something, barges in on the long answer
 * and hangs up; the gateway's histograms then hold that call's greeting, turn and barge-in, its
 * scrape needs the token, and nothing in either scrape names the call or the numbers.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { getFreePort } from '../../src/temporal/dev-server';
import { startFakeCartesia, type FakeCartesia } from '../fakes/cartesia-server';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { FRAME_MS, type TwilioCaller } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { eventually } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { configureTwilio } from '../support/telephony';
import { killHard, spawnGatewayProcess, spawnWorkerProcess } from '../support/worker-process-control';
import { speechFakesEnv } from '../support/voice-stack';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'audio');
const HELLO_WAV = path.join(FIXTURES, 'hello-appointment.wav');
const STOP_WAV = path.join(FIXTURES, 'stop-wait.wav');
const ACCOUNT_SID = `AC${'3c'.repeat(16)}`;
const AUTH_TOKEN = 'metrics-test-auth-token-0123456789';
const OUR_NUMBER = '+15005550007';
const CALLER_NUMBER = '+14155550123';
const METRICS_TOKEN = 'metrics-scrape-token-0123456789';

let h: Harness;
let twilio: FakeTwilio;
let deepgram: FakeDeepgram;
let cartesia: FakeCartesia;
let openai: FakeOpenAI;
let gatewayPort: number;
let worker: ChildProcess;
let gateway: ChildProcess;

beforeAll(async () => {
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  deepgram = await startFakeDeepgram({ apiKey: 'dg-key' });
  cartesia = await startFakeCartesia({ apiKey: 'ca-key' });
  openai = await startFakeOpenAI();
  gatewayPort = await getFreePort();
  const vendorEnv = {
    TWILIO_API_BASE_URL: twilio.apiBaseUrl,
    GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}`,
    GATEWAY_PORT: String(gatewayPort),
    ...speechFakesEnv(deepgram, cartesia, openai),
  };
  h = await startHarness({ env: vendorEnv });
  worker = await spawnWorkerProcess(h, vendorEnv);
  gateway = (await spawnGatewayProcess(h, { ...vendorEnv, METRICS_TOKEN })).child;
  await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }, { twilio_max_concurrent: 5 });
}, 180_000);

afterAll(async () => {
  await killHard(worker);
  await killHard(gateway);
  await h?.stop();
  await Promise.all([twilio?.stop(), deepgram?.stop(), cartesia?.stop(), openai?.stop()]);
});

async function scrape(url: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; body: string }> {
  const res = await fetch(url, { headers });
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
}

const gatewayMetrics = (token = METRICS_TOKEN) => scrape(`http://127.0.0.1:${gatewayPort}/metrics`, { authorization: `Bearer ${token}` });

/** The value of one sample, e.g. `voice_greeting_latency_seconds_count` or `x{a="b"}`; 0 when absent. */
function sample(body: string, name: string): number {
  const line = body.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : 0;
}

const heardMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;

describe('GET /metrics', () => {
  it('counts a voice call’s greeting, turn and barge-in on the gateway without naming the call', async () => {
    const agent = await h.request('POST', '/api/agents', {
      body: {
        name: 'metrics-voice',
        prompt: 'Be helpful.',
        greeting: 'Hello, this is the clinic.',
        pipeline_settings: { ...PIPELINE_DEFAULTS, vad_start_secs: 0.2, vad_stop_secs: 0.4, min_words: 1 },
      },
    });
    expect(agent.status).toBe(201);
    const answer =
      'We have two free slots tomorrow, one at nine in the morning and one at eleven. The afternoon is fully booked, I am afraid, but Thursday afternoon is still open if that suits you better.';
    openai.setResponder(() => ({ content: answer }));
    deepgram.script(['I would like to book an appointment for tomorrow.', 'Stop, wait a second.']);

    const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/metrics-voice`, from: CALLER_NUMBER, to: OUR_NUMBER });
    expect(fake.errors).toEqual([]);
    const verb = fake.verbs![0]!;
    if (verb.verb !== 'Connect') throw new Error(`expected <Connect>, got ${fake.twiml}`);
    const caller = fake.caller!;
    const callId = verb.stream.parameters.call_id!;

    await eventually(async () => heardMs(caller) >= 1000, 15_000, 20);
    // While the call is live, the gateway counts it under its provider, and the API sees it in progress.
    const live = await gatewayMetrics();
    expect(sample(live.body, 'voice_gateway_calls{provider="twilio",status="live"}')).toBe(1);
    await eventually(async () => {
      const api = await scrape(`${h.api.url}/metrics`);
      return sample(api.body, 'voice_calls_active{provider="twilio",status="in_progress"}') >= 1;
    }, 10_000);

    const beforeAnswer = heardMs(caller);
    await caller.say(HELLO_WAV);
    await eventually(async () => heardMs(caller) >= beforeAnswer + 1500, 15_000, 20);
    await caller.say(STOP_WAV);
    expect(caller.clears.length).toBeGreaterThanOrEqual(1);
    await caller.hangup();
    await eventually(async () => ['completed', 'failed'].includes((await h.request('GET', `/api/calls/${callId}`)).body.status), 20_000);

    const { status, type, body } = await gatewayMetrics();
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(sample(body, 'voice_greeting_latency_seconds_count')).toBe(1);
    const greetingSecs = sample(body, 'voice_greeting_latency_seconds_sum');
    expect(greetingSecs).toBeGreaterThan(0);
    expect(greetingSecs).toBeLessThan(5);
    // The workflow asked the gateway for the media session and the greeting: once for the call.
    expect(sample(body, 'voice_workflow_first_request_seconds_count')).toBe(1);
    expect(sample(body, 'voice_workflow_first_request_seconds_sum')).toBeLessThan(10);
    expect(sample(body, 'voice_turn_latency_seconds_count{from="speech_end"}')).toBeGreaterThanOrEqual(1);
    expect(sample(body, 'voice_turn_latency_seconds_count{from="vad_stop"}')).toBeGreaterThanOrEqual(1);
    expect(sample(body, 'voice_barge_in_latency_seconds_count')).toBeGreaterThanOrEqual(1);
    for (const stage of ['vad', 'stt_final', 'handoff', 'llm_first_token', 'first_sentence', 'tts_first_audio']) {
      expect(sample(body, `voice_turn_stage_seconds_count{stage="${stage}"}`)).toBeGreaterThanOrEqual(1);
    }
    // Each caller turn is counted by how its reply started; the call had one first turn.
    const firstTurns = body.split('\n').filter((l) => l.startsWith('voice_turns_total{') && l.includes('first="true"'));
    expect(firstTurns.reduce((n, l) => n + Number(l.split(' ').pop()), 0)).toBe(1);
    // The call is over: no call left on the gateway.
    expect(sample(body, 'voice_gateway_calls{provider="twilio",status="live"}')).toBe(0);
    // Default process metrics are there too.
    expect(body).toMatch(/^process_cpu_user_seconds_total /m);

    // Nothing that names the call, its stream or the people on it.
    const api = await scrape(`${h.api.url}/metrics`);
    expect(api.status).toBe(200);
    for (const text of [body, api.body]) {
      expect(text).not.toContain(callId);
      expect(text).not.toContain(verb.stream.parameters.call_id!);
      for (const number of [CALLER_NUMBER, OUR_NUMBER]) {
        expect(text).not.toContain(number);
        expect(text).not.toContain(number.slice(1));
      }
      expect(text).not.toContain(ACCOUNT_SID);
      expect(text).not.toMatch(/tomorrow|clinic/i);
    }
  }, 120_000);

  it('needs the bearer token when METRICS_TOKEN is set', async () => {
    const none = await scrape(`http://127.0.0.1:${gatewayPort}/metrics`);
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body)).toEqual({ detail: expect.stringContaining('METRICS_TOKEN') });
    expect(none.body).not.toContain('voice_');
    expect((await gatewayMetrics('wrong-token-0123456789')).status).toBe(401);
    expect((await gatewayMetrics(`${METRICS_TOKEN}x`)).status).toBe(401);
    expect((await gatewayMetrics()).status).toBe(200);
  });

  it('without METRICS_TOKEN answers only local scrapes that did not come through a proxy', async () => {
    const local = await scrape(`${h.api.url}/metrics`);
    expect(local.status).toBe(200);
    expect(local.body).toMatch(/^# TYPE voice_turn_latency_seconds histogram$/m);
    const proxied = await scrape(`${h.api.url}/metrics`, { 'x-forwarded-for': '203.0.113.9' });
    expect(proxied.status).toBe(403);
    expect(JSON.parse(proxied.body).detail).toMatch(/METRICS_TOKEN/);
    const forwarded = await scrape(`${h.api.url}/metrics`, { forwarded: 'for=203.0.113.9' });
    expect(forwarded.status).toBe(403);
  });
});
