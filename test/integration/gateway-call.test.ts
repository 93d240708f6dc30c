/**
 * A whole inbound phone call through the real pieces: the fake Twilio rings the API's inbound
 * webhook and follows its TwiML to the real media gateway, the real call workflow runs the
 * conversation with the gateway's activities, and the Deepgram / Cartesia / OpenAI fakes stand
 * in for the vendors. What the caller hears, the call's events and its recording are checked.
 */
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { readWavFile, channelOf } from '../../src/audio/wav';
import { startGateway, type RunningGateway } from '../../src/gateway/server';
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { setLogLevel } from '../../src/shared/logger';
import { getFreePort } from '../../src/temporal/dev-server';
import { callWorkflowId } from '../../workflows/call-definitions';
import { startFakeCartesia, type FakeCartesia } from '../fakes/cartesia-server';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { FRAME_MS, type TwilioCaller } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { createAgent, eventually } from '../support/fixtures';
import { configureTwilio } from '../support/telephony';
import { startHarness, type Harness } from '../support/harness';
import { speechFakesEnv } from '../support/voice-stack';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'audio');
const HELLO_WAV = path.join(FIXTURES, 'hello-appointment.wav');
const STOP_WAV = path.join(FIXTURES, 'stop-wait.wav');
const ACCOUNT_SID = `AC${'5e'.repeat(16)}`;
const AUTH_TOKEN = 'gateway-call-test-auth-token-0123';
const OUR_NUMBER = '+15005550006';
const MS_PER_CHAR = 60;

let h: Harness;
let twilio: FakeTwilio;
let deepgram: FakeDeepgram;
let cartesia: FakeCartesia;
let openai: FakeOpenAI;
let gateway: RunningGateway;

beforeAll(async () => {
  setLogLevel('error');
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  deepgram = await startFakeDeepgram({ apiKey: 'dg-key' });
  cartesia = await startFakeCartesia({ apiKey: 'ca-key' });
  openai = await startFakeOpenAI();
  const gatewayPort = await getFreePort();
  h = await startHarness({
    worker: true,
    env: {
      TWILIO_API_BASE_URL: twilio.apiBaseUrl,
      GATEWAY_PUBLIC_URL: `ws://127.0.0.1:${gatewayPort}`,
      ...speechFakesEnv(deepgram, cartesia, openai),
    },
  });
  gateway = await startGateway(
    h.gatewayDeps(),
    gatewayPort,
    '127.0.0.1',
  );
  await configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }, { twilio_max_concurrent: 5 });
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await h?.stop();
  await Promise.all([twilio?.stop(), deepgram?.stop(), cartesia?.stop(), openai?.stop()]);
});

const heardMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;

async function events(callId: string): Promise<Array<{ event_type: string; data: any; timestamp: string }>> {
  return (await h.request('GET', `/api/calls/${callId}/events`)).body;
}

describe('an inbound call through the media gateway and the call workflow', () => {
  it('greets, answers a question in audio, stops when the caller barges in, and hangs up', async () => {
    const greeting = 'Hello! You have reached the clinic. How can I help?';
    // vad_stop_secs 0.4: the fixture's "Hello, …" pauses ~0.2 s at the comma, which would end the turn.
    await createAgent(h.db, h.box, { name: 'clinic-voice', greeting, pipeline_settings: { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 } });
    deepgram.script(['I would like to book an appointment for tomorrow.', 'Stop, wait a second.']);
    const answer = 'Of course. We have openings at nine and at eleven in the morning. The afternoon is fully booked, unfortunately, but Thursday afternoon is still free if that suits you better.';
    openai.enqueue({ content: answer });

    const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/clinic-voice`, from: '+14155550100', to: OUR_NUMBER });
    expect(fake.errors).toEqual([]);
    const caller = fake.caller!;
    const verb = fake.verbs![0]!;
    if (verb.verb !== 'Connect') throw new Error(`expected <Connect>, got ${fake.twiml}`);
    const callId = verb.stream.parameters.call_id!;

    // The gateway marks the call in progress, and itself as the call's gateway (what the gateway
    // watchdog reads), when the stream starts: long before the workflow's write after the greeting.
    await eventually(async () => heardMs(caller) > 0, 10_000, 10);
    const early = await eventually(async () => {
      const call = await h.db.models.Call.findByPk(callId);
      return call?.get('gateway_id') ? { status: call.get('status'), gatewayId: call.get('gateway_id'), heard: heardMs(caller) } : null;
    }, 2000, 10);
    expect(early).toMatchObject({ status: 'in_progress', gatewayId: gateway.taskQueue });
    expect(early.heard).toBeLessThan(2000); // of a 3 s greeting: the workflow writes only after it

    // The greeting is heard as audio.
    await eventually(async () => heardMs(caller) >= (greeting.length - 2) * MS_PER_CHAR - 100, 15_000, 20);
    await eventually(async () => (await events(callId)).some((e) => e.event_type === 'agent_spoke'), 5000, 50);

    // A question, answered in audio; the caller interrupts the long answer.
    const before = heardMs(caller);
    await caller.say(HELLO_WAV);
    await eventually(async () => heardMs(caller) >= before + 2500, 15_000, 20).catch(async (err) => {
      console.log(JSON.stringify(await events(callId), null, 1), heardMs(caller), before, openai.requests.length);
      throw err;
    });
    openai.enqueue({ content: 'Sure, take your time.' });
    await caller.say(STOP_WAV);
    await eventually(async () => (await events(callId)).some((e) => e.event_type === 'interruption'), 10_000, 50);
    await eventually(async () => (await events(callId)).filter((e) => e.event_type === 'agent_spoke').length >= 3, 15_000, 50);
    // The next turn is armed on the gateway (the caller hangs up with it untaken).
    const handle = h.temporal.workflow.getHandle(callWorkflowId(callId));
    const S = temporal.api.enums.v1.PendingActivityState;
    await eventually(async () => (await handle.describe()).raw.pendingActivities?.some((a) => a.activityType?.name === 'armedTurn' && a.state === S.PENDING_ACTIVITY_STATE_STARTED), 10_000, 20);
    await caller.hangup();

    const row = await eventually(async () => {
      const call = (await h.request('GET', `/api/calls/${callId}`)).body;
      return call.status === 'completed' && call;
    }, 15_000);
    expect(row).toMatchObject({ end_reason: 'user_ended' });
    expect(row.tts_characters).toBeGreaterThan(greeting.length);

    // The hang-up costs one workflow task: the media session's result releases the untaken armed
    // turn (`releasedArm`), which never completes on its own, and nothing is disarmed. The row says
    // `completed` from inside that last task (its local activity): the history is read once the
    // workflow has closed.
    await handle.result();
    const history = (await handle.fetchHistory()).events!;
    const T = temporal.api.enums.v1.EventType;
    const scheduled = (type: string) =>
      history.filter((e) => e.eventType === T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && e.activityTaskScheduledEventAttributes!.activityType!.name === type).map((e) => Number(e.eventId));
    const completedAt = new Map(
      history.filter((e) => e.eventType === T.EVENT_TYPE_ACTIVITY_TASK_COMPLETED).map((e) => [Number(e.activityTaskCompletedEventAttributes!.scheduledEventId), history.indexOf(e)]),
    );
    const armed = scheduled('armedTurn');
    expect(armed.filter((id) => !completedAt.has(id))).toEqual([armed[armed.length - 1]]);
    expect(scheduled('disarmTurn')).toEqual([]);
    const sessionEnd = completedAt.get(scheduled('mediaSession')[0]!)!;
    expect(history.slice(sessionEnd).filter((e) => e.eventType === T.EVENT_TYPE_WORKFLOW_TASK_STARTED)).toHaveLength(1);
    expect(history[history.length - 1]!.eventType).toBe(T.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
    // The incoming call's workflow waited for its stream (a start delay), and the gateway's
    // mediaConnected (a signal-with-start) is in its first workflow task: a call's set-up is one task.
    const connected = history.findIndex((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'mediaConnected');
    const taskDone = history.findIndex((e, i) => i > connected && e.eventType === T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
    expect(history.slice(0, taskDone).filter((e) => e.eventType === T.EVENT_TYPE_WORKFLOW_TASK_STARTED)).toHaveLength(1);
    expect(history[0]!.workflowExecutionStartedEventAttributes!.firstWorkflowTaskBackoff?.seconds).toBeTruthy();
    // That task sends the greeting and the first turn to the gateway without waiting for a write
    // (a local activity would hold its commands back), and records no marker (the call workflow
    // has no patches: it is pinned to its worker's deployment version).
    const nextTask = history.findIndex((e, i) => i > taskDone && e.eventType === T.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
    const commands = history.slice(taskDone, nextTask);
    expect(commands.filter((e) => e.eventType === T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED).map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name)).toEqual(['mediaSession', 'speak', 'armedTurn']);
    expect(commands.filter((e) => e.eventType === T.EVENT_TYPE_MARKER_RECORDED).map((e) => e.markerRecordedEventAttributes!.markerName)).toEqual([]);
    expect(row.recording_path).toBe(path.join(h.config.dataDir, 'recordings', `${callId}.wav`));

    const list = await events(callId);
    const types = list.map((e) => e.event_type);
    for (const type of ['call_started', 'tts_started', 'tts_stopped', 'tts_usage', 'user_spoke', 'agent_spoke', 'llm_usage', 'ttfb_metric', 'interruption', 'call_ended']) {
      expect(types).toContain(type);
    }
    const spoke = list.filter((e) => e.event_type === 'agent_spoke').map((e) => e.data);
    expect(spoke[0]).toMatchObject({ text: greeting });
    // Only what the caller heard of the interrupted answer is in the transcript.
    expect(spoke[1]!.interrupted).toBe(true);
    expect(answer.startsWith(spoke[1]!.text)).toBe(true);
    expect(spoke[1]!.text.length).toBeLessThan(answer.length);
    expect(list.filter((e) => e.event_type === 'user_spoke').map((e) => e.data.text)).toEqual([
      'I would like to book an appointment for tomorrow.',
      'Stop, wait a second.',
    ]);
    const metrics = list.filter((e) => e.event_type === 'ttfb_metric').map((e) => e.data);
    const processors = new Set(metrics.map((m) => m.processor));
    for (const p of ['stt', 'llm', 'tts', 'e2e']) expect(processors).toContain(p);
    const e2e = metrics.filter((m) => m.processor === 'e2e');
    console.log(`real call: e2e ${e2e.map((m) => `${m.ms} ms (${m.after_vad_stop_ms} after VAD stop)`).join(', ')}`);
    // Events are ordered by time.
    const times = list.map((e) => Date.parse(`${e.timestamp}Z`));
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    // The recording: a stereo WAV as long as the call.
    const wav = readWavFile(row.recording_path);
    expect(wav).toMatchObject({ channels: 2, sampleRate: 8000 });
    const wavSecs = wav.samples.length / 2 / 8000;
    const closed = await caller.closed;
    expect(Math.abs(wavSecs * 1000 - (closed.atMs - caller.connectedAtMs))).toBeLessThan(300);
    expect(channelOf(wav, 1).some((s) => Math.abs(s) > 1000)).toBe(true);
    const download = await h.request('GET', `/api/recordings/${callId}`);
    expect(download.status).toBe(200);
  }, 90_000);
});
