/**
 * Turn runs through the real pieces (docs/conversation-engine.md): a gateway that always runs
 * turns (GATEWAY_TURN_RUN_LOAD=0) answers three plain caller turns in one armed activity, and
 * the workflow records them as if each had come alone — every turn, in order, at the gateway's
 * time — with fewer workflow tasks than turns. A gateway killed while its run holds turns loses
 * none of them: the workflow reads them back from the run journal. Meanwhile the call's live
 * event stream shows the turns the run holds (pending).
 */
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { createParser } from 'eventsource-parser';
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { setLogLevel } from '../../src/shared/logger';
import { callWorkflowId, type ArmedTurnResult } from '../../workflows/call-definitions';
import type { FakeDeepgram } from '../fakes/deepgram-server';
import type { FakeOpenAI } from '../fakes/openai-server';
import { FRAME_MS, type TwilioCaller } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { createAgent, eventually } from '../support/fixtures';
import { killHard } from '../support/worker-process-control';
import { configureTwilio } from '../support/telephony';
import type { Harness } from '../support/harness';
import { startVoiceStack, type VoiceStack } from '../support/voice-stack';

const HELLO_WAV = path.join(__dirname, '..', 'fixtures', 'audio', 'hello-appointment.wav');
const ACCOUNT_SID = `AC${'7a'.repeat(16)}`;
const AUTH_TOKEN = 'turn-runs-test-auth-token-012345';
const OUR_NUMBER = '+15005550006';
const MS_PER_CHAR = 60;

const GREETING = 'Hello, clinic here.';
const ASKED = ['I would like an appointment.', 'Is nine possible?', 'Thank you.'];
const REPLIES = ['Sure, when?', 'Yes, nine works.', 'You are welcome.'];
const heardMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;
type Event = { event_type: string; data: any; timestamp: string };

interface RunsStack {
  stack: VoiceStack;
  twilio: FakeTwilio;
  h: Harness;
  deepgram: FakeDeepgram;
  openai: FakeOpenAI;
}

/** The voice stack with turn runs always on, worker and gateway as child processes. */
async function startRunsStack(): Promise<RunsStack> {
  setLogLevel('error');
  const twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  const configure = (h: Harness) => configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER });
  const stack = await startVoiceStack({
    telephony: [{ fake: twilio, env: { TWILIO_API_BASE_URL: twilio.apiBaseUrl }, configure }],
    env: { GATEWAY_TURN_RUN_LOAD: '0' },
    processes: true,
  });
  await createAgent(stack.h.db, stack.h.box, { name: 'runs-voice', greeting: GREETING, pipeline_settings: { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 } });
  return { stack, twilio, h: stack.h, deepgram: stack.deepgram, openai: stack.openai };
}

/** An inbound call that hears the greeting, then asks `turns` questions, each answer heard whole. */
async function talk(s: RunsStack, from: string, turns: number): Promise<{ caller: TwilioCaller; callId: string }> {
  s.deepgram.script(ASKED.slice(0, turns));
  for (const content of REPLIES.slice(0, turns)) s.openai.enqueue({ content });
  const fake = await s.twilio.simulateInbound({ webhookUrl: `${s.h.api.url}/telephony/twilio/inbound/runs-voice`, from, to: OUR_NUMBER });
  const verb = fake.verbs![0]!;
  if (verb.verb !== 'Connect') throw new Error(`expected <Connect>, got ${fake.twiml}`);
  const caller = fake.caller!;
  await eventually(async () => heardMs(caller) >= (GREETING.length - 2) * MS_PER_CHAR - 100, 15_000, 20);
  for (const reply of REPLIES.slice(0, turns)) {
    const before = heardMs(caller);
    await caller.say(HELLO_WAV);
    await eventually(async () => heardMs(caller) >= before + reply.length * MS_PER_CHAR, 15_000, 20);
  }
  await new Promise((r) => setTimeout(r, 300)); // the last reply's end marked as played
  return { caller, callId: verb.stream.parameters.call_id! };
}

const spoken = (list: Event[]) =>
  list.filter((e) => e.event_type === 'user_spoke' || e.event_type === 'agent_spoke').map((e) => `${e.event_type === 'user_spoke' ? 'caller' : 'agent'}: ${e.data.text}`);
const conversation = (turns: number) => [`agent: ${GREETING}`, ...ASKED.slice(0, turns).flatMap((q, i) => [`caller: ${q}`, `agent: ${REPLIES[i]}`])];

// One stack, worker and gateway as processes, as deployed: the last test kills the gateway.
describe('turn runs', () => {
  let s: RunsStack;
  beforeAll(async () => {
    s = await startRunsStack();
  }, 120_000);
  afterAll(() => s?.stack.stop());

  it('answer plain turns in one armed activity; the workflow records each, in order, at the gateway time', async () => {
    const { h, openai } = s;
    const { caller, callId } = await talk(s, '+14155550177', 3);
    const handle = h.temporal.workflow.getHandle(callWorkflowId(callId));
    const T = temporal.api.enums.v1.EventType;
    await caller.hangup();
    await handle.result();

    const list: Event[] = (await h.request('GET', `/api/calls/${callId}/events`)).body;
    expect(spoken(list)).toEqual(conversation(3));
    const times = list.map((e) => Date.parse(`${e.timestamp}Z`));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(list.filter((e) => e.event_type === 'llm_usage')).toHaveLength(3);
    // Each request the LLM got carried the whole conversation the caller heard, as the workflow would build it.
    expect(openai.requests[2]!.body.messages.slice(-5).map((m: { content: string }) => m.content)).toEqual([ASKED[0], REPLIES[0], ASKED[1], REPLIES[1], ASKED[2]]);

    // The history: the three turns came back in one armedTurn result (reported when the stream
    // closed), or two if the run's 10 s ran out first on a slow machine.
    const history = (await handle.fetchHistory()).events!;
    const results = history
      .filter((e) => e.eventType === T.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)
      .map((e) => e.activityTaskCompletedEventAttributes!.result?.payloads?.[0]?.data)
      // Activities that return nothing (a disarm, the end of the media) carry an empty payload.
      .map((data) => (data?.length ? (JSON.parse(Buffer.from(data).toString()) as Partial<ArmedTurnResult> | null) : null))
      .filter((r): r is Partial<ArmedTurnResult> => r !== null && typeof r === 'object' && 'earlier' in r);
    expect(results.length).toBeGreaterThanOrEqual(1);
    expect(results.length).toBeLessThanOrEqual(2);
    expect(results.flatMap((r) => [...r.earlier!.map((t) => t.utterance.text), ...(r.utterance ? [r.utterance.text] : [])])).toEqual(ASKED);
    const tasks = history.filter((e) => e.eventType === T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED).length;
    console.log(`turn runs: ${tasks} workflow tasks, ${history.length} history events for a greeting and 3 turns, in ${results.length} run result(s)`);
    // Set-up, greeting and end take 5; each run's result one more (a run cut in two costs one task more).
    expect(tasks).toBeLessThanOrEqual(5 + results.length);
    // The stream ended normally: the run journal holds nothing of the call any more.
    await eventually(async () => (await journalRows(h, callId)) === 0, 5000, 50);
  }, 90_000);

  it('lose none of the turns the run held when the gateway dies: the workflow reads them back from the journal', async () => {
    const { h } = s;
    const { callId } = await talk(s, '+14155550178', 2);
    // Both turns are held by the run (10 s), journaled, not reported.
    expect(await journalRows(h, callId)).toBe(2);
    // Someone following the call live sees them already: the stream sends them as pending.
    const pending = await pendingOnStream(h, callId);
    expect(pending.map((t) => [t.user_text, t.agent_text])).toEqual([0, 1].map((i) => [ASKED[i], REPLIES[i]]));
    expect(spoken((await h.request('GET', `/api/calls/${callId}/events`)).body)).toEqual([`agent: ${GREETING}`]);
    await killHard(s.stack.gatewayProcess!);
    // The call's end is its `call_ended` event (the status and its reason are written before it).
    const list: Event[] = await eventually(async () => {
      const events: Event[] = (await h.request('GET', `/api/calls/${callId}/events`)).body;
      return events.some((e) => e.event_type === 'call_ended') && events;
    }, 45_000, 200);
    const call = (await h.request('GET', `/api/calls/${callId}`)).body;
    expect(call).toMatchObject({ status: 'failed', end_reason: 'error' });
    expect(spoken(list)).toEqual(conversation(2));
    expect(call.transcript.map((t: { text: string }) => t.text)).toEqual([GREETING, ASKED[0], REPLIES[0], ASKED[1], REPLIES[1]]);
  }, 120_000);
});

/** The first `pending` message of the call's event stream (GET /api/calls/{id}/events/stream). */
async function pendingOnStream(h: Harness, callId: string): Promise<Array<{ user_text: string; agent_text: string }>> {
  const res = await fetch(`${h.api.url}/api/calls/${callId}/events/stream`, { headers: { authorization: `Bearer ${await h.adminToken()}` } });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let turns: Array<{ user_text: string; agent_text: string }> | undefined;
  const parser = createParser({ onEvent: (m) => (turns ??= m.event === 'pending' ? JSON.parse(m.data).turns : undefined) });
  while (!turns) {
    const next = await reader.read();
    if (next.done) throw new Error('the stream ended without a pending message');
    parser.feed(next.value);
  }
  await reader.cancel();
  return turns;
}

const journalRows = async (h: Harness, callId: string) =>
  Number(((await h.db.sequelize.query('SELECT count(*) AS n FROM call_turn_journal WHERE call_id = $1', { bind: [callId], plain: true })) as { n: string }).n);
