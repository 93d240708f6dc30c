/**
 * The media gateway under test, as gateway.test.ts and gateway-failures.test.ts use it: the
 * Deepgram / Cartesia / OpenAI protocol fakes, a real Temporal server, the gateway in the test's
 * process, and a stand-in call workflow (test/support/gateway-probe-workflow.ts) that drives the
 * gateway's activities on the gateway's own task queue exactly as the call workflow does; callers
 * are simulated Twilio callers on the Media Streams WebSocket. `useGatewayProbe()` registers the
 * hooks; the exported bindings hold the running parts once `beforeAll` has run.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import WebSocket from 'ws';
import { startGateway, type RunningGateway } from '../../src/gateway/server';
import { streamToken } from '../../src/gateway/stream/stream-token';
import { PIPELINE_DEFAULTS, type PipelineSettings } from '../../src/shared/catalog';
import { setLogLevel } from '../../src/shared/logger';
import { callWorkflowId, type GatewayEvent, type VoiceConfig } from '../../workflows/call-definitions';
import { startFakeCartesia, type FakeCartesia } from '../fakes/cartesia-server';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import type { PhoneCaller } from '../fakes/phone-caller';
import { connectTwilioCaller, FRAME_MS, newSid, type TwilioCaller } from '../fakes/twilio-caller';
import { finishSignal, gatewayProbeWorkflow, probeStateQuery, speakUpdate, voiceTurnUpdate, type ProbeState } from './gateway-probe-workflow';
import { startHarness, type Harness } from './harness';
import { sleep } from './speech';
import { speechFakesEnv } from './voice-stack';

export const FIXTURES = path.join(__dirname, '..', 'fixtures', 'audio');
export const HELLO_WAV = path.join(FIXTURES, 'hello-appointment.wav'); // speech 520–3860 ms
export const STOP_WAV = path.join(FIXTURES, 'stop-wait.wav'); // speech 300–1900 ms
export const STOP_ONSET_MS = 300;
export const MS_PER_CHAR = 60; // the TTS fakes' speaking rate

export let deepgram: FakeDeepgram;
export let cartesia: FakeCartesia;
export let openai: FakeOpenAI;
export let h: Harness;
export let gateway: RunningGateway;
let probeWorker: { stop(): Promise<void> } | undefined;
/** The probe workflow's task queue (a test may start its own probes there). */
export const probeQueue = `gateway-probe-${crypto.randomBytes(4).toString('hex')}`;
const callers: PhoneCaller[] = [];
const workflows: WorkflowHandle[] = [];

function voiceConfig(pipeline: Partial<PipelineSettings> = {}): VoiceConfig {
  return {
    agentName: 'gateway-probe',
    stt: { provider: 'deepgram', model: null, language: 'en', mode: null, settings: {} },
    tts: { provider: 'cartesia', model: null, voice: 'voice-1', language: null, settings: {} },
    pipeline: { ...PIPELINE_DEFAULTS, ...pipeline },
  };
}

export async function eventually<T>(probe: () => Promise<T | undefined | null | false>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await sleep(20);
  }
}

export const probeState = (handle: WorkflowHandle) => handle.query(probeStateQuery);

export interface TestCall {
  callId: string;
  handle: WorkflowHandle;
  caller: TwilioCaller;
  state(): Promise<ProbeState>;
}

export async function startProbe(pipeline: Partial<PipelineSettings> = {}): Promise<{ callId: string; handle: WorkflowHandle }> {
  const callId = crypto.randomUUID();
  const handle = await h.temporal.workflow.start(gatewayProbeWorkflow, {
    taskQueue: probeQueue,
    workflowId: callWorkflowId(callId),
    args: [{ callId, voice: voiceConfig(pipeline) }],
  });
  track(handle);
  return { callId, handle };
}

export async function connect(callId: string, url = `${gateway.url}/media/twilio`): Promise<TwilioCaller> {
  const caller = await connectTwilioCaller({ url, customParameters: { call_id: callId, token: streamToken(h.config.JWT_SECRET!, callId) } });
  callers.push(caller);
  return caller;
}

export async function newCall(pipeline: Partial<PipelineSettings> = {}): Promise<TestCall> {
  const { callId, handle } = await startProbe(pipeline);
  const caller = await connect(callId);
  await eventually(async () => (await probeState(handle)).connected, 10_000, 'mediaConnected');
  return { callId, handle, caller, state: () => probeState(handle) };
}

export const speak = (call: TestCall, utteranceId: string, text: string) => call.handle.executeUpdate(speakUpdate, { args: [{ utteranceId, text }] });

export function voiceTurn(call: TestCall, utteranceId: string) {
  return call.handle.executeUpdate(voiceTurnUpdate, {
    args: [{ utteranceId, provider: 'openai', model: 'fake-model', messages: [{ role: 'user', content: 'Hi' }], tools: [] }],
  });
}

export const eventsOf = (events: GatewayEvent[], type: GatewayEvent['type']) => events.filter((e) => e.type === type);

/** Milliseconds of agent speech the caller has heard (non-silent frames). */
export const heardSpeechMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;

/** The gateway's /healthz (stream statistics per provider under `streams`). */
export async function health(): Promise<any> {
  return (await fetch(`${gateway.url.replace('ws:', 'http:')}/healthz`)).json();
}

/** A raw socket on the stream endpoint, for protocol abuse; resolves the close code. */
export async function rawStream(): Promise<{ ws: WebSocket; closed: Promise<number> }> {
  const ws = new WebSocket(`${gateway.url}/media/twilio`);
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  ws.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, closed };
}

export function startMessage(callId: string, token: string, streamSid = newSid('MZ')) {
  return JSON.stringify({
    event: 'start',
    sequenceNumber: '1',
    streamSid,
    start: {
      accountSid: newSid('AC'),
      streamSid,
      callSid: newSid('CA'),
      tracks: ['inbound'],
      customParameters: { call_id: callId, token },
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    },
  });
}

/** A test's own probe and caller, finished and hung up after the test as the stack's are. */
export function track(handle: WorkflowHandle, caller?: PhoneCaller): void {
  workflows.push(handle);
  if (caller) callers.push(caller);
}

/** A worker running the probe workflow on `taskQueue` (its own bundle); `stop()` shuts it down. */
async function runProbeWorker(address: string, taskQueue: string): Promise<{ stop(): Promise<void> }> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('./gateway-probe-workflow'),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: (m: string) => console.error(m) } as never,
  });
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({ connection, taskQueue, workflowBundle: { code } });
  const running = worker.run();
  return {
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

/** Starts the gateway and its probe for the file's tests, and stops them after. */
export function useGatewayProbe(): void {
  beforeAll(async () => {
    setLogLevel('error'); // bad-input tests make the gateway warn on purpose
    deepgram = await startFakeDeepgram({ apiKey: 'dg-key' });
    cartesia = await startFakeCartesia({ apiKey: 'ca-key' });
    openai = await startFakeOpenAI();
    h = await startHarness({ env: speechFakesEnv(deepgram, cartesia, openai) });
    probeWorker = await runProbeWorker(h.config.TEMPORAL_ADDRESS!, probeQueue);
    gateway = await startGateway(h.gatewayDeps(), 0, '127.0.0.1');
  }, 120_000);

  afterEach(async () => {
    for (const c of callers.splice(0)) if (c.isOpen) await c.hangup();
    for (const w of workflows.splice(0)) await w.signal(finishSignal).catch(() => undefined);
    openai.reset();
  });

  afterAll(async () => {
    await gateway?.stop();
    await probeWorker?.stop();
    await h?.stop();
    await Promise.all([deepgram?.stop(), cartesia?.stop(), openai?.stop()]);
    // Recordings of this file's calls live in the harness's temporary DATA_DIR.
    if (h?.config.dataDir.includes('vap-data-')) fs.rmSync(h.config.dataDir, { recursive: true, force: true });
  });
}
