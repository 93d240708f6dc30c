/**
 * No caller left on a dead line, for every telephony vendor with a fake: whenever a call ends on
 * the platform's side — the media gateway killed mid-call, the agent's end_call, POST
 * /api/calls/end, the idle end — the platform hangs the provider's call up through the vendor's
 * REST API. Real API, call worker, PostgreSQL and Temporal; the media gateway in its own process
 * (so it can be SIGKILLed); the vendor, Deepgram, Cartesia and OpenAI are local fakes.
 *
 * Each vendor has its own platform and fakes (a line), so the vendors run side by side
 * (`it.concurrent`, as demo.test.ts): one test per vendor takes its line through the four
 * endings in turn, and a failure names the ending.
 */
import type { ChildProcess } from 'node:child_process';
import { temporal } from '@temporalio/proto';
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { setLogLevel } from '../../src/shared/logger';
import { getFreePort } from '../../src/temporal/dev-server';
import { callWorkflowId } from '../../workflows/call-definitions';
import { startFakeCartesia } from '../fakes/cartesia-server';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { tonePcm } from '../fakes/phone-caller';
import { fakeTelephonyProviders, startFakeTelephony, type FakePhoneCall, type FakeTelephony } from '../fakes/telephony-fakes';
import { createAgent, eventually } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { speechFakesEnv } from '../support/voice-stack';
import { killHard, spawnGatewayProcess } from '../support/worker-process-control';

const OUR_NUMBER = '+15005550006';
const GREETING = 'Hello, you are through to the clinic.';

interface Line {
  provider: string;
  h: Harness;
  phone: FakeTelephony;
  deepgram: FakeDeepgram;
  openai: FakeOpenAI;
  stopFakes: () => Promise<unknown>;
  gateway?: { child: ChildProcess; url: string };
  gatewayEnv: Record<string, string>;
}

async function openLine(provider: string): Promise<Line> {
  const phone = await startFakeTelephony(provider);
  const deepgram = await startFakeDeepgram({ apiKey: 'dg-key' });
  const cartesia = await startFakeCartesia({ apiKey: 'ca-key' });
  const openai = await startFakeOpenAI();
  const stopFakes = () => Promise.all([phone.stop(), deepgram.stop(), cartesia.stop(), openai.stop()]);
  const gatewayPort = await getFreePort();
  const vendors = speechFakesEnv(deepgram, cartesia, openai);
  const h = await startHarness({ worker: true, env: { ...phone.env, ...vendors, GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}` } });
  const line: Line = { provider, h, phone, deepgram, openai, stopFakes, gatewayEnv: { ...vendors, GATEWAY_PORT: String(gatewayPort) } };
  const res = await h.request('PUT', '/api/settings/telephony', {
    body: { provider, public_base_url: h.api.url, ...phone.settings(OUR_NUMBER) },
  });
  expect(res.status).toBe(200);
  await createAgent(h.db, h.box, {
    name: 'clinic',
    greeting: GREETING,
    pipeline_settings: { ...PIPELINE_DEFAULTS, idle_warn_secs: 2, idle_end_secs: 2 },
  });
  const endpoint = await h.request('POST', '/api/settings/endpoints', { body: { phone_number: OUR_NUMBER, provider, inbound_agent_name: 'clinic' } });
  expect(endpoint.status).toBe(201);
  return line;
}

async function closeLine(line: Line): Promise<void> {
  if (line.gateway) await killHard(line.gateway.child);
  await line.h.stop();
  await line.stopFakes();
}

/** An inbound call whose greeting the caller has heard. */
async function connectedCall(line: Line, from: string): Promise<FakePhoneCall & { callId: string }> {
  const call = await line.phone.ringInbound({ webhookUrl: `${line.h.api.url}/telephony/${line.provider}/inbound/clinic`, from, to: OUR_NUMBER });
  expect(call.callId).toBeDefined();
  expect(call.caller).toBeDefined();
  await eventually(async () => call.caller!.speechFrames().length > 10, 15_000, 50);
  return call as FakePhoneCall & { callId: string };
}

const finalRow = (line: Line, callId: string) =>
  eventually(async () => {
    const row = (await line.h.request('GET', `/api/calls/${callId}`)).body;
    return ['completed', 'failed', 'no_answer'].includes(row.status) && row.end_reason && row;
  }, 30_000);

const ENDINGS: Array<[string, (line: Line) => Promise<void>]> = [
  [
    'the media gateway is killed mid-call: the call fails and the provider call is hung up',
    async (line) => {
      const call = await connectedCall(line, '+14155550201');
      await killHard(line.gateway!.child);
      const row = await finalRow(line, call.callId);
      expect(row).toMatchObject({ status: 'failed', end_reason: 'error' });
      const events = (await line.h.request('GET', `/api/calls/${call.callId}/events`)).body as Array<{ event_type: string; data: any }>;
      expect(events.find((e) => e.event_type === 'error')?.data).toMatchObject({ context: 'gateway' });
      await eventually(async () => line.phone.hangupRequests().includes(call.providerCallId), 10_000);
      await expect(call.ended).resolves.toBeDefined();
    },
  ],
  [
    'the agent ends the call (end_call): the provider call is hung up',
    async (line) => {
      line.openai.setResponder(() => ({ content: 'Goodbye!', tool_calls: [{ name: 'end_call', arguments: {} }] }));
      const call = await connectedCall(line, '+14155550202');
      line.deepgram.script(['Thanks, that is all.']);
      await call.caller!.say(tonePcm(1000, 440, 8000, call.caller!.format.sampleRate));
      const row = await finalRow(line, call.callId);
      expect(row).toMatchObject({ status: 'completed', end_reason: 'agent_ended' });
      await eventually(async () => line.phone.hangupRequests().includes(call.providerCallId), 10_000);
      await call.ended;
      // What the call cost Temporal (workflows/provider-hangup.ts): the hang-up is a local activity
      // (a marker, no activity task), and the call records no patch marker (call workflows are
      // pinned to their worker's deployment version: no patched()).
      // Read once the workflow has closed: the row is written from inside its last task.
      const handle = line.h.temporal.workflow.getHandle(callWorkflowId(call.callId));
      await handle.result();
      const history = await handle.fetchHistory();
      const T = temporal.api.enums.v1.EventType;
      const scheduled = history.events!.filter((e) => e.eventType === T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED).map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name);
      expect(scheduled).not.toContain('hangupProviderCall');
      const markers = history.events!.filter((e) => e.eventType === T.EVENT_TYPE_MARKER_RECORDED).map((e) => e.markerRecordedEventAttributes!.markerName);
      expect(markers.filter((m) => m === 'core_patch')).toHaveLength(0);
      expect(markers).toContain('core_local_activity');
    },
  ],
  [
    'POST /api/calls/end: the provider call is hung up before the API answers',
    async (line) => {
      const call = await connectedCall(line, '+14155550203');
      const res = await line.h.request('POST', '/api/calls/end', { body: { call_id: call.callId } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
      expect(line.phone.hangupRequests()).toContain(call.providerCallId);
      await call.ended;
    },
  ],
  [
    'the idle timer ends a silent call: the provider call is hung up',
    async (line) => {
      line.openai.setResponder(() => ({ content: 'Are you still there?' }));
      const call = await connectedCall(line, '+14155550204');
      const row = await finalRow(line, call.callId);
      expect(row).toMatchObject({ status: 'completed', end_reason: 'idle_timeout' });
      await eventually(async () => line.phone.hangupRequests().includes(call.providerCallId), 10_000);
      await call.ended;
    },
  ],
];

// At load: jest starts concurrent tests before any beforeAll.
setLogLevel('error');

it.concurrent.each(fakeTelephonyProviders())('%s: no caller left on a dead line, however the call ends (gateway killed, end_call, POST /api/calls/end, idle)', async (provider) => {
  const line = await openLine(provider);
  try {
    for (const [ending, run] of ENDINGS) {
      const { gateway } = line;
      if (!gateway || gateway.child.exitCode !== null || gateway.child.signalCode !== null) line.gateway = await spawnGatewayProcess(line.h, line.gatewayEnv);
      line.openai.setResponder(undefined);
      try {
        await run(line);
      } catch (err) {
        throw new Error(`${provider}, ${ending}: ${(err as Error).message}`, { cause: err });
      }
    }
  } finally {
    await closeLine(line);
  }
}, 300_000);
