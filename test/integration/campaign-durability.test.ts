/**
 * A campaign survives its worker being SIGKILLed twice mid-list: the worker runs in its own OS
 * process (test/support/worker-process.ts) and is killed while attempts are being decided and
 * dialled; a new one picks the campaign up. The fake Twilio's dial log is the judge: every
 * contact dialled exactly once, none skipped.
 */
import type { ChildProcess } from 'node:child_process';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { createAgent, eventually } from '../support/fixtures';
import { configureTwilio } from '../support/telephony';
import { startHarness, type Harness } from '../support/harness';
import { defaultProviderEnv, FakePool } from '../support/speech-vendors';
import { startMediaStandIn, type MediaStandIn, STAND_IN_ENV, hangUpAnsweredAfter } from '../support/media-stand-in';
import { killHard, spawnWorkerProcess } from '../support/worker-process-control';

const ACCOUNT_SID = `AC${'0d'.repeat(16)}`;
const AUTH_TOKEN = 'campaign-durability-token-0123456789';

let h: Harness;
let twilio: FakeTwilio;
let gateway: MediaStandIn;
const speechFakes = new FakePool();
let workerEnv: Record<string, string>;
const workers: ChildProcess[] = [];
let hangups: NodeJS.Timeout;

beforeAll(async () => {
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, ringMs: 150 });
  gateway = await startMediaStandIn();
  const speechEnv = await defaultProviderEnv(speechFakes);
  workerEnv = { ...speechEnv, ...STAND_IN_ENV, TWILIO_API_BASE_URL: twilio.apiBaseUrl, GATEWAY_PUBLIC_URL: gateway.url, CAMPAIGN_POLL_MS: '200' };
  h = await startHarness({ env: workerEnv });
  await createAgent(h.db, h.box, { name: 'durable-dialler' });
  await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: '+15005550006' }, { twilio_max_concurrent: 20 });
  hangups = hangUpAnsweredAfter(gateway, 300);
});
afterAll(async () => {
  clearInterval(hangups);
  for (const w of workers) await killHard(w);
  await h?.stop();
  await twilio?.stop();
  await gateway?.stop();
  await speechFakes.stopAll();
});

async function newWorker() {
  const worker = await spawnWorkerProcess(h, workerEnv);
  workers.push(worker);
  return worker;
}

const numbers = Array.from({ length: 12 }, (_, i) => `+1415555${String(6000 + i)}`);
const dialLog = () =>
  twilio.calls.filter((c) => numbers.includes(c.to)).map((c) => ({ to: c.to, callId: /answer\/([0-9a-f-]+)/.exec(String(c.params.Url ?? ''))?.[1] ?? '' }));

it('dials no contact twice and accounts for every one although the worker is killed twice mid-campaign', async () => {
  let worker = await newWorker();
  const res = await h.request('POST', '/api/campaigns', {
    body: { name: 'Durable', agent_name: 'durable-dialler', contacts: numbers.map((phone) => ({ phone })), pacing: { max_concurrent: 3, calls_per_minute: 600 } },
  });
  expect(res.status).toBe(201);

  await eventually(async () => dialLog().length >= 2, 30_000, 20);
  await killHard(worker);
  worker = await newWorker();
  await eventually(async () => dialLog().length >= 6, 30_000, 20);
  await killHard(worker);
  worker = await newWorker();

  const done = await eventually(async () => {
    const c = (await h.request('GET', `/api/campaigns/${res.body.id}`)).body;
    return c.status === 'completed' && c;
    // Each kill costs the campaign a heartbeat timeout (5 s) and a workflow task timeout (10 s).
  }, 60_000);
  const log = dialLog();
  // Never twice: each number and each attempt's call reached the provider at most once.
  expect(new Set(log.map((d) => d.to)).size).toBe(log.length);
  expect(new Set(log.map((d) => d.callId)).size).toBe(log.length);
  // A kill between an attempt's call record and the provider's answer leaves that attempt
  // unconfirmed (docs/campaigns.md): never sent again, its call ends `failed` at once with why.
  // Seen in CI: only such contacts may be missing from the provider's log.
  const missing = numbers.filter((n) => !log.some((d) => d.to === n));
  for (const phone of missing) {
    const calls = (await h.db.models.Call.findAll({ where: { phone_number: phone } })).map((c) => c.get({ plain: true }));
    expect(calls).toHaveLength(1);
    expect(calls[0]!.provider_call_sid).toBeNull();
    expect(calls[0]!.status).toBe('failed');
  }
  expect(missing.length).toBeLessThanOrEqual(2 * 3); // at most max_concurrent in flight per kill
  expect(done.progress.attempts).toBe(12);
  expect(done.progress.by_state.done + done.progress.by_state.failed).toBe(12);
  expect(done.progress.by_state.pending + done.progress.by_state.calling + done.progress.by_state.retry_wait).toBe(0);
}, 150_000);
