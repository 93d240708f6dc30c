/**
 * The gateway ⇄ workflow messages stay compatible across one version, both ways
 * (docs/versioning.md, "The policy for workflow changes"). Gateways are not versioned: during a
 * rollout a call pinned to the previous worker version talks to a new gateway, and a new call to
 * a gateway of the previous version. The previous version here is real code, not a recording: the
 * source of a git revision (VAP_PREVIOUS_VERSION; by default the commit that `.ci/previous-version`
 * names, the last version deployed before this one), checked out into a temporary directory and run from there — its worker
 * (workflows and activities) in one direction, its media gateway in the other. Each call is a
 * Twilio call through every real part (API, PostgreSQL, Temporal, processes; vendor fakes), and
 * its history names the processes that ran it: the workflow tasks' and the gateway activities'
 * poller identities are `<pid>@<host>`.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { callWorkflowId } from '../../workflows/call-definitions';
import { getFreePort } from '../../src/temporal/dev-server';
import { startFakeCartesia, type FakeCartesia } from '../fakes/cartesia-server';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { FRAME_MS, type TwilioCaller } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { eventually } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { configureTwilio } from '../support/telephony';
import { voiceCallApi } from '../support/voice-call-api';
import { speechFakesEnv } from '../support/voice-stack';
import { harnessEnv, killHard, spawnGatewayProcess, spawnReady } from '../support/worker-process-control';

const ROOT = path.join(__dirname, '..', '..');
const HELLO_WAV = path.join(ROOT, 'test', 'fixtures', 'audio', 'hello-appointment.wav');
const ACCOUNT_SID = `AC${'5c'.repeat(16)}`;
const AUTH_TOKEN = 'gateway-compat-test-auth-token-01234';
const OUR_NUMBER = '+15005550006';
const MS_PER_CHAR = 60; // the TTS fake's audio length per character
const GREETING = 'Hello, the clinic.';
const REPLY = 'Tomorrow at nine works.';

const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();

/** The revision of the previous version and its source, runnable with this checkout's node_modules. */
function checkOutPrevious(): { ref: string; dir: string } {
  // The version deployed before this one: .ci/previous-version names its commit (moved on at each release).
  const ref = process.env.VAP_PREVIOUS_VERSION ?? fs.readFileSync(path.join(ROOT, '.ci', 'previous-version'), 'utf8').trim();
  const commit = git('rev-parse', '--verify', `${ref}^{commit}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-previous-'));
  const archive = execFileSync('git', ['archive', commit, 'workflows', 'src', 'activities', 'test/support', 'package.json', 'tsconfig.json'], { cwd: ROOT, maxBuffer: 512 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(dir, 'node_modules'));
  return { ref: `${ref} (${commit.slice(0, 12)})`, dir };
}

let previous: { ref: string; dir: string };
let h: Harness;
let twilio: FakeTwilio;
let deepgram: FakeDeepgram;
let cartesia: FakeCartesia;
let openai: FakeOpenAI;
let env: Record<string, string>;
const children: ChildProcess[] = [];

beforeAll(async () => {
  previous = checkOutPrevious();
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  deepgram = await startFakeDeepgram({ apiKey: 'dg-key' });
  cartesia = await startFakeCartesia({ apiKey: 'ca-key' });
  openai = await startFakeOpenAI();
  const gatewayPort = await getFreePort();
  env = {
    TWILIO_API_BASE_URL: twilio.apiBaseUrl,
    GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}`,
    GATEWAY_PORT: String(gatewayPort),
    ...speechFakesEnv(deepgram, cartesia, openai),
  };
  h = await startHarness({ env });
  await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }, { twilio_max_concurrent: 5 });
  await voiceCallApi(() => h).createVoiceAgent({ name: 'compat-clinic', prompt: 'Be helpful.', greeting: GREETING });
}, 180_000);

afterAll(async () => {
  for (const child of children) await killHard(child);
  await h?.stop();
  await Promise.all([twilio?.stop(), deepgram?.stop(), cartesia?.stop(), openai?.stop()]);
  if (previous) fs.rmSync(previous.dir, { recursive: true, force: true });
});

/** A script of the previous version's test/support, run from its checkout. */
async function spawnPrevious(script: string, ready: RegExp, extraEnv: Record<string, string> = {}) {
  const relative = path.relative(path.join(ROOT, 'test', 'support'), path.join(previous.dir, 'test', 'support', script));
  const { child, match } = await spawnReady(relative, { ...harnessEnv(h), ...env, ...extraEnv }, ready);
  children.push(child);
  return { child, match };
}

const heardMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;

/** An inbound call: greeting, one question answered in audio, the caller hangs up. */
async function aCall(): Promise<string> {
  openai.setResponder(() => ({ content: REPLY }));
  deepgram.script(['I would like to book an appointment for tomorrow.']);
  const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/compat-clinic`, from: '+14155550177', to: OUR_NUMBER });
  expect(fake.errors).toEqual([]);
  const verb = fake.verbs![0]!;
  if (verb.verb !== 'Connect') throw new Error(`expected <Connect>, got ${fake.twiml}`);
  const caller = fake.caller!;
  const callId = verb.stream.parameters.call_id!;
  await eventually(async () => heardMs(caller) >= (GREETING.length - 2) * MS_PER_CHAR - 100, 20_000, 20);
  const before = heardMs(caller);
  await caller.say(HELLO_WAV);
  await eventually(async () => heardMs(caller) >= before + (REPLY.length - 2) * MS_PER_CHAR, 20_000, 20);
  // The reply has played to its end (the gateway reported it) before the caller hangs up.
  await eventually(async () => (await voiceCallApi(() => h).events(callId)).some((e) => e.event_type === 'agent_spoke' && e.data.text === REPLY), 15_000);
  await caller.hangup();
  const call = await voiceCallApi(() => h).finalCall(callId, 30_000);
  expect(call).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
  expect(call.transcript.map((t: any) => t.text)).toEqual([GREETING, 'I would like to book an appointment for tomorrow.', REPLY]);
  return callId;
}

/** Who ran the call: the pollers of its workflow tasks, and of its activities on the gateway's queue. */
async function ranBy(callId: string, gatewayQueue: string): Promise<{ workflow: Set<string>; gateway: Set<string> }> {
  const history = await h.temporal.workflow.getHandle(callWorkflowId(callId)).fetchHistory();
  const pid = (identity: string | null | undefined) => (identity ?? '').split('@')[0]!;
  const events = history.events ?? [];
  const onGateway = new Set(events.filter((e) => e.activityTaskScheduledEventAttributes?.taskQueue?.name === gatewayQueue).map((e) => Number(e.eventId)));
  return {
    workflow: new Set(events.filter((e) => e.workflowTaskStartedEventAttributes).map((e) => pid(e.workflowTaskStartedEventAttributes!.identity))),
    gateway: new Set(
      events
        .filter((e) => e.activityTaskStartedEventAttributes && onGateway.has(Number(e.activityTaskStartedEventAttributes.scheduledEventId)))
        .map((e) => pid(e.activityTaskStartedEventAttributes!.identity)),
    ),
  };
}

describe('a rollout, one version apart', () => {
  let oldWorker: ChildProcess;
  let newGateway: { child: ChildProcess; taskQueue: string };

  beforeAll(async () => {
    // The previous version's worker: its own workflows and activities, as its build ran them.
    const bundle = path.join(previous.dir, 'workflow-bundle.js');
    const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never;
    fs.writeFileSync(bundle, (await bundleWorkflowCode({ workflowsPath: path.join(previous.dir, 'workflows'), logger: silent })).code);
    oldWorker = (await spawnPrevious('worker-process.ts', /worker ready/, { VAP_TEST_WORKFLOW_BUNDLE: bundle })).child;
    newGateway = await spawnGatewayProcess(h, env);
    children.push(newGateway.child);
  }, 300_000);

  it("runs a call of the previous version's workflow through the new gateway", async () => {
    const callId = await aCall();
    const ran = await ranBy(callId, newGateway.taskQueue);
    expect(ran.workflow).toEqual(new Set([String(oldWorker.pid)]));
    expect(ran.gateway).toEqual(new Set([String(newGateway.child.pid)]));
  }, 240_000);

  it("runs a new call through the previous version's gateway", async () => {
    // The new version's worker and the previous version's gateway, on the same port.
    // Gone (its presence goes stale in GATEWAY_LIVENESS_SECS); it held no call any more.
    await killHard(newGateway.child);
    await killHard(oldWorker);
    // As a deploy's new workers do: this version becomes current (the previous one may have been).
    await h.startWorker({ WORKER_SET_CURRENT: 'always' });
    const oldGateway = await spawnPrevious('gateway-process.ts', /gateway ready (\{.*\})/);
    const oldGatewayQueue = (JSON.parse(oldGateway.match[1]!) as { taskQueue: string }).taskQueue;

    const callId = await aCall();
    const ran = await ranBy(callId, oldGatewayQueue);
    expect(ran.workflow).toEqual(new Set([String(process.pid)]));
    expect(ran.gateway).toEqual(new Set([String(oldGateway.child.pid)]));
  }, 240_000);
});
