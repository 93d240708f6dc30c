/**
 * Turn runs through the real pieces (docs/conversation-engine.md): a gateway that always runs
 * turns (GATEWAY_TURN_RUN_LOAD=0) answers three plain caller turns in one armed activity, and
 * the workflow records them as if each had come alone — every turn, in order, at the gateway's
 * time — with fewer workflow tasks than turns.
 */
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { setLogLevel } from '../../src/shared/logger';
import { callWorkflowId, type ArmedTurnResult } from '../../workflows/call-definitions';
import type { FakeDeepgram } from '../fakes/deepgram-server';
import type { FakeOpenAI } from '../fakes/openai-server';
import { FRAME_MS, type TwilioCaller } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { createAgent, eventually } from '../support/fixtures';
import { configureTwilio } from '../support/telephony';
import type { Harness } from '../support/harness';
import { startVoiceStack, type VoiceStack } from '../support/voice-stack';

const HELLO_WAV = path.join(__dirname, '..', 'fixtures', 'audio', 'hello-appointment.wav');
const ACCOUNT_SID = `AC${'7a'.repeat(16)}`;
const AUTH_TOKEN = 'turn-runs-test-auth-token-012345';
const OUR_NUMBER = '+15005550006';
const MS_PER_CHAR = 60;

let stack: VoiceStack;
let h: Harness;
let twilio: FakeTwilio;
let deepgram: FakeDeepgram;
let openai: FakeOpenAI;

beforeAll(async () => {
  setLogLevel('error');
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  const configure = (h: Harness) => configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER });
  stack = await startVoiceStack({
    telephony: [{ fake: twilio, env: { TWILIO_API_BASE_URL: twilio.apiBaseUrl }, configure }],
    env: { GATEWAY_TURN_RUN_LOAD: '0' },
  });
  ({ h, deepgram, openai } = stack);
}, 120_000);

afterAll(() => stack?.stop());

const heardMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;

describe('turn runs', () => {
  it('answer plain turns in one armed activity; the workflow records each, in order, at the gateway time', async () => {
    const greeting = 'Hello, clinic here.';
    await createAgent(h.db, h.box, { name: 'runs-voice', greeting, pipeline_settings: { ...PIPELINE_DEFAULTS, min_words: 1, vad_stop_secs: 0.4 } });
    const asked = ['I would like an appointment.', 'Is nine possible?', 'Thank you.'];
    const replies = ['Sure, when?', 'Yes, nine works.', 'You are welcome.'];
    deepgram.script(asked);
    for (const content of replies) openai.enqueue({ content });

    const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/runs-voice`, from: '+14155550177', to: OUR_NUMBER });
    const verb = fake.verbs![0]!;
    if (verb.verb !== 'Connect') throw new Error(`expected <Connect>, got ${fake.twiml}`);
    const caller = fake.caller!;
    const callId = verb.stream.parameters.call_id!;
    await eventually(async () => heardMs(caller) >= (greeting.length - 2) * MS_PER_CHAR - 100, 15_000, 20);
    for (const reply of replies) {
      const before = heardMs(caller);
      await caller.say(HELLO_WAV);
      await eventually(async () => heardMs(caller) >= before + reply.length * MS_PER_CHAR, 15_000, 20);
    }
    await new Promise((r) => setTimeout(r, 300)); // the last reply's end marked as played
    const handle = h.temporal.workflow.getHandle(callWorkflowId(callId));
    const T = temporal.api.enums.v1.EventType;
    await caller.hangup();
    await handle.result();

    const list: Array<{ event_type: string; data: any; timestamp: string }> = (await h.request('GET', `/api/calls/${callId}/events`)).body;
    const said = list.filter((e) => e.event_type === 'user_spoke' || e.event_type === 'agent_spoke').map((e) => `${e.event_type === 'user_spoke' ? 'caller' : 'agent'}: ${e.data.text}`);
    expect(said).toEqual([`agent: ${greeting}`, ...asked.flatMap((q, i) => [`caller: ${q}`, `agent: ${replies[i]}`])]);
    const times = list.map((e) => Date.parse(`${e.timestamp}Z`));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(list.filter((e) => e.event_type === 'llm_usage')).toHaveLength(3);
    // Each request the LLM got carried the whole conversation the caller heard, as the workflow would build it.
    expect(openai.requests[2]!.body.messages.slice(-5).map((m: { content: string }) => m.content)).toEqual([asked[0], replies[0], asked[1], replies[1], asked[2]]);

    // The history: the three turns came back in one armedTurn result (reported when the stream
    // closed), or two if the run's 10 s ran out first on a slow machine.
    const history = (await handle.fetchHistory()).events!;
    const results = history
      .filter((e) => e.eventType === T.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)
      .map((e) => JSON.parse(Buffer.from(e.activityTaskCompletedEventAttributes!.result!.payloads![0]!.data!).toString()) as Partial<ArmedTurnResult>)
      .filter((r) => r && 'earlier' in r);
    expect(results.length).toBeGreaterThanOrEqual(1);
    expect(results.length).toBeLessThanOrEqual(2);
    expect(results.flatMap((r) => [...r.earlier!.map((t) => t.utterance.text), ...(r.utterance ? [r.utterance.text] : [])])).toEqual(asked);
    const tasks = history.filter((e) => e.eventType === T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED).length;
    console.log(`turn runs: ${tasks} workflow tasks, ${history.length} history events for a greeting and 3 turns`);
    expect(tasks).toBeLessThanOrEqual(6);
  }, 90_000);
});
