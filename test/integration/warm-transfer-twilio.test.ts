/**
 * Warm transfer on Twilio, end to end through every real part: the API (webhooks, the warm
 * transfer's hold, answer, events and return callbacks), the call workflow in a worker process,
 * the media gateway in its own process, and the vendor fakes (Twilio with conferences and a second
 * leg for the destination, Deepgram, Cartesia, an OpenAI-compatible LLM). The caller waits in a
 * conference hearing hold audio while the agent briefs the destination on a stream of its own; 1
 * joins them (the agent leaves), 2 or no answer brings the caller back to the agent.
 */
import path from 'node:path';
import type { FakeDeepgram } from '../fakes/deepgram-server';
import type { FakeOpenAI } from '../fakes/openai-server';
import { FRAME_MS, type TwilioCaller } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { eventually } from '../support/fixtures';
import { voiceCallApi } from '../support/voice-call-api';
import { MS_PER_CHAR, SUMMARY, scriptWarmAgent, warmDestinations } from '../support/warm-transfer-kit';
import { configureTwilio } from '../support/telephony';
import type { Harness } from '../support/harness';
import { startVoiceStack, type VoiceStack } from '../support/voice-stack';
import { CONNECT_PROMPT } from '../../src/shared/warm-briefing';

const HELLO_WAV = path.join(__dirname, '..', 'fixtures', 'audio', 'hello-appointment.wav');
const ACCOUNT_SID = `AC${'7c'.repeat(16)}`;
const AUTH_TOKEN = 'warm-transfer-test-auth-token-0123';
const OUR_NUMBER = '+15005550008';
const BILLING = '+14155550123';
const SALES = '+14155550124';

let h: Harness;
let twilio: FakeTwilio;
let deepgram: FakeDeepgram;
let openai: FakeOpenAI;
let stack: VoiceStack;

beforeAll(async () => {
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  stack = await startVoiceStack({
    processes: true,
    telephony: [{ fake: twilio, env: { TWILIO_API_BASE_URL: twilio.apiBaseUrl }, configure: (h) => configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }, { twilio_max_concurrent: 5 }) }],
  });
  ({ h, deepgram, openai } = stack);
}, 180_000);

afterAll(() => stack?.stop());

const heardMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;
const { events, finalCall, createVoiceAgent } = voiceCallApi(() => h);

const DESTINATIONS = warmDestinations(BILLING, SALES);

async function inboundCall(agentName: string) {
  const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/${agentName}`, from: '+14155550142', to: OUR_NUMBER });
  expect(fake.errors).toEqual([]);
  const verb = fake.verbs![0]!;
  if (verb.verb !== 'Connect') throw new Error(`expected <Connect>, got ${fake.twiml}`);
  return { fake, caller: fake.caller!, callId: verb.stream.parameters.call_id! };
}

const scriptAgent = (destination: string, sorry: string, briefings: any[]) => scriptWarmAgent(openai, destination, sorry, briefings);

describe('warm transfer_call on a Twilio call', () => {
  it('holds the caller with hold audio, briefs the destination with a summary of the call, and joins them on 1', async () => {
    await createVoiceAgent({ name: 'warm-desk', prompt: 'You are the front desk.', greeting: 'Hello, front desk.', transfer_destinations: DESTINATIONS });
    const briefings: any[] = [];
    scriptAgent('billing', 'unused', briefings);
    deepgram.script(['I was charged twice for invoice 1234.']);
    const { fake, caller, callId } = await inboundCall('warm-desk');
    await eventually(async () => heardMs(caller) >= 500, 15_000, 20);
    const human = twilio.nextCaller(30_000);
    await caller.say(HELLO_WAV);

    // The destination is a call of its own, from our number, whose answer is a stream to the agent.
    const person = await human;
    const leg = twilio.call(person.callSid)!;
    expect(leg).toMatchObject({ to: BILLING, from: OUR_NUMBER, direction: 'outbound-api' });
    expect(leg.params.MachineDetection).toBe('Enable');
    const briefing = `${SUMMARY} ${CONNECT_PROMPT}`;
    await eventually(async () => heardMs(person) >= (briefing.length - 4) * MS_PER_CHAR - 200, 30_000, 20);
    person.dtmf('1');
    person.dtmf('#');

    const call = await finalCall(callId, 30_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'transferred', transfer_summary: SUMMARY });
    // The briefing's LLM request carried the transcript and the destination's summary prompt (the default).
    expect(briefings).toHaveLength(1);
    expect(briefings[0].messages[0].content).toContain('who is calling, what they want, what has been done');
    expect(briefings[0].messages[1].content).toContain('Caller: I was charged twice for invoice 1234.');

    const list = await events(callId);
    const types = list.map((e) => e.event_type);
    const order = ['transfer_started', 'transfer_ringing', 'transfer_briefing_started', 'transfer_briefing_completed', 'transfer_briefing_reply', 'transfer_completed'];
    expect(order.map((t) => types.indexOf(t))).toEqual([...order.map((t) => types.indexOf(t))].sort((a, b) => a - b));
    expect(order.every((t) => types.includes(t))).toBe(true);
    expect(list.find((e) => e.event_type === 'transfer_started')!.data).toMatchObject({ destination: 'billing', mode: 'warm', to: BILLING, hold_audio: 'tone' });
    expect(list.find((e) => e.event_type === 'transfer_briefing_completed')!.data).toEqual({ destination: 'billing', summary: SUMMARY });
    expect(list.find((e) => e.event_type === 'transfer_briefing_reply')!.data).toMatchObject({ decision: 'connect' });
    expect(types).not.toContain('transfer_failed');
    // The caller's transcript stops at the hand-over; the briefing is not in it.
    expect(call.transcript.map((t: any) => t.text)).toEqual(['Hello, front desk.', 'I was charged twice for invoice 1234.', 'Please hold while I brief billing.']);

    // The conference holds both legs and no stream of the agent.
    const conference = twilio.conference(`warm-${callId}`)!;
    expect([...conference.participants].sort()).toEqual([fake.sid, leg.sid].sort());
    expect(conference.startedAtMs).not.toBeNull();
    expect(caller.isOpen).toBe(false);
    await eventually(async () => !person.isOpen, 5_000);
    expect(fake.errors).toEqual([]);
    expect(leg.errors).toEqual([]);

    // The caller heard hold audio, not silence, all through the briefing.
    const at = (t: string) => new Date(list.find((e) => e.event_type === t)!.timestamp).getTime();
    const [from, to] = [at('transfer_briefing_started'), at('transfer_briefing_completed')];
    const during = fake.held.filter((f) => f.atMs >= from && f.atMs <= to);
    expect(to - from).toBeGreaterThan(2_000);
    expect(during.length * FRAME_MS).toBeGreaterThan((to - from) * 0.8);
    expect(during.filter((f) => f.rms > 300).length / during.length).toBeGreaterThan(0.95);
    expect(fake.callbacks.find((c) => c.kind === 'play')!.url).toBe(`${h.api.url}/telephony/twilio/hold-tone.wav`);
  }, 90_000);

  it('brings the caller back to the agent when the destination presses 2, and the agent carries on', async () => {
    await createVoiceAgent({ name: 'warm-declined', prompt: 'You are the front desk.', greeting: 'Hello.', transfer_destinations: DESTINATIONS });
    const sorry = 'Billing cannot take your call right now. Can I help?';
    scriptAgent('billing', sorry, []);
    deepgram.script(['I was charged twice for invoice 1234.']);
    const { fake, caller, callId } = await inboundCall('warm-declined');
    await eventually(async () => heardMs(caller) >= 200, 15_000, 20);
    const human = twilio.nextCaller(30_000);
    await caller.say(HELLO_WAV);
    const person = await human;
    await eventually(async () => heardMs(person) >= 2_000, 30_000, 20);
    const back = twilio.nextCaller(30_000);
    person.dtmf('2');
    person.dtmf('#');

    const again = await back;
    expect(again.callSid).toBe(fake.sid);
    await eventually(async () => heardMs(again) >= (sorry.length - 2) * MS_PER_CHAR - 100, 20_000, 20);
    await eventually(async () => (await events(callId)).some((e) => e.event_type === 'agent_spoke' && e.data.text === sorry), 10_000);
    expect((await h.request('GET', `/api/calls/${callId}`)).body.status).toBe('in_progress');
    await eventually(async () => twilio.call(person.callSid)!.endedAtMs !== undefined, 10_000);
    expect(twilio.conference(`warm-${callId}`)!.participants).toEqual([]);

    await again.hangup();
    const call = await finalCall(callId, 20_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
    // The caller's part, the briefing, the caller back: three parts of one recording.
    expect(call.recording_parts.map((p: string) => path.basename(p))).toEqual([`${callId}.wav`, `${callId}-2.wav`, `${callId}-3.wav`]);
    const list = await events(callId);
    expect(list.find((e) => e.event_type === 'transfer_failed')!.data).toMatchObject({ destination: 'billing', mode: 'warm', reason: 'declined' });
    expect(list.filter((e) => e.event_type === 'call_status' && e.data.status === 'media_connected')).toHaveLength(3);
    expect(call.transcript.map((t: any) => t.text)).toEqual(['Hello.', 'I was charged twice for invoice 1234.', 'Please hold while I brief billing.', sorry]);
  }, 90_000);

  it('brings the caller back when the destination does not answer, and when a machine answers', async () => {
    twilio.setOutcome({ outcome: 'no-answer', ringMs: 500 }, SALES);
    await createVoiceAgent({ name: 'warm-unanswered', prompt: 'You are the front desk.', greeting: 'Hello.', transfer_destinations: DESTINATIONS });
    const sorry = 'Nobody in sales picked up. Can I help?';
    scriptAgent('sales', sorry, []);
    deepgram.script(['I would like to upgrade my plan.']);
    const { caller, callId } = await inboundCall('warm-unanswered');
    await eventually(async () => heardMs(caller) >= 200, 15_000, 20);
    const back = twilio.nextCaller(30_000);
    await caller.say(HELLO_WAV);
    const again = await back;
    await eventually(async () => heardMs(again) >= (sorry.length - 2) * MS_PER_CHAR - 100, 20_000, 20);
    await eventually(async () => (await events(callId)).some((e) => e.event_type === 'agent_spoke' && e.data.text === sorry), 10_000);
    await again.hangup();
    const call = await finalCall(callId, 20_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'user_ended', transfer_summary: null });
    const list = await events(callId);
    expect(list.find((e) => e.event_type === 'transfer_failed')!.data).toMatchObject({ destination: 'sales', reason: 'no answer' });
    expect(list.map((e) => e.event_type)).not.toContain('transfer_briefing_started');

    // An answering machine (Twilio's synchronous AMD on the destination's call): no briefing, hung up.
    twilio.setOutcome({ outcome: 'answer', amd: { answeredBy: 'machine', decidedMs: 300 } }, SALES);
    deepgram.script(['I would like to upgrade my plan.']);
    const second = await inboundCall('warm-unanswered');
    await eventually(async () => heardMs(second.caller) >= 200, 15_000, 20);
    const returned = twilio.nextCaller(30_000);
    await second.caller.say(HELLO_WAV);
    const back2 = await returned;
    await eventually(async () => (await events(second.callId)).some((e) => e.event_type === 'agent_spoke' && e.data.text === sorry), 20_000);
    await back2.hangup();
    await finalCall(second.callId, 20_000);
    const machine = await events(second.callId);
    expect(machine.find((e) => e.event_type === 'transfer_failed')!.data).toMatchObject({ destination: 'sales', reason: 'voicemail', answered_by: 'machine_start' });
    expect(machine.map((e) => e.event_type)).not.toContain('transfer_briefing_started');
    const leg = twilio.calls.find((c) => c.to === SALES && c.callbacks.some((d) => d.params.AnsweredBy === 'machine_start'))!;
    expect(leg.callbacks.find((d) => d.kind === 'twiml')!.body).toContain('<Hangup');
  }, 90_000);

  it('does not lose the caller when the worker is killed during the briefing: the destination says connect and the transfer completes', async () => {
    await createVoiceAgent({ name: 'warm-killed', prompt: 'You are the front desk.', greeting: 'Hello.', transfer_destinations: DESTINATIONS });
    scriptAgent('billing', 'unused', []);
    deepgram.script(['I was charged twice for invoice 1234.']);
    const { fake, caller, callId } = await inboundCall('warm-killed');
    await eventually(async () => heardMs(caller) >= 200, 15_000, 20);
    const human = twilio.nextCaller(30_000);
    await caller.say(HELLO_WAV);
    const person = await human;
    await eventually(async () => heardMs(person) >= 1_000, 30_000, 20);
    // Killed while the agent speaks to the destination: a new worker carries the call on from its history.
    await stack.restartWorker();
    const briefing = `${SUMMARY} ${CONNECT_PROMPT}`;
    await eventually(async () => heardMs(person) >= (briefing.length - 4) * MS_PER_CHAR - 200, 40_000, 20);
    // This time the destination says it (speech, through the STT) rather than pressing 1.
    deepgram.script(['Yes, connect them.']);
    await person.say(HELLO_WAV);
    const call = await finalCall(callId, 40_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'transferred', transfer_summary: SUMMARY });
    expect([...twilio.conference(`warm-${callId}`)!.participants].sort()).toEqual([fake.sid, person.callSid].sort());
    const types = (await events(callId)).map((e) => e.event_type);
    expect(types.filter((t) => t === 'transfer_completed')).toHaveLength(1);
    expect((await events(callId)).find((e) => e.event_type === 'transfer_briefing_reply')!.data).toMatchObject({ text: 'Yes, connect them.', decision: 'connect' });
    expect(types).not.toContain('transfer_failed');
  }, 120_000);
});
