/**
 * Warm transfer on Plivo, end to end through every real part: the API (signed webhooks: the warm
 * transfer's hold, answer, events, join and return callbacks), the call workflow in a worker
 * process, the media gateway in its own process, and the vendor fakes (Plivo with conferences and
 * a second call for the destination, Deepgram, Cartesia, an OpenAI-compatible LLM). The caller
 * waits in a `<Conference>` hearing the wait sound while the agent briefs the destination on a
 * stream of its own; 1 joins them (the agent leaves), 2, busy, no answer or a machine bring the
 * caller back to the agent.
 */
import path from 'node:path';
import { parseExtraHeaders } from '../../src/providers/telephony/plivo/media-messages';
import { plivoStreamCredentials } from '../../src/providers/telephony/plivo/stream-auth';
import { CONNECT_PROMPT } from '../../src/shared/warm-briefing';
import type { FakeDeepgram } from '../fakes/deepgram-server';
import type { FakeOpenAI } from '../fakes/openai-server';
import { FRAME_MS, type PlivoCaller } from '../fakes/plivo-caller';
import { startFakePlivo, type FakePlivo } from '../fakes/plivo-server';
import { eventually } from '../support/fixtures';
import { voiceCallApi } from '../support/voice-call-api';
import { MS_PER_CHAR, SUMMARY, scriptWarmAgent, warmDestinations } from '../support/warm-transfer-kit';
import { configurePlivo } from '../support/telephony';
import type { Harness } from '../support/harness';
import { startVoiceStack, type VoiceStack } from '../support/voice-stack';

const HELLO_WAV = path.join(__dirname, '..', 'fixtures', 'audio', 'hello-appointment.wav');
const AUTH_ID = 'MAPLIVOWARMTRANSFER1';
const AUTH_TOKEN = 'plivo-warm-transfer-test-token-01';
const OUR_NUMBER = '+918047491898';
const BILLING = '+918047000111';
const SALES = '+918047000222';

let h: Harness;
let plivo: FakePlivo;
let deepgram: FakeDeepgram;
let openai: FakeOpenAI;
let stack: VoiceStack;

beforeAll(async () => {
  plivo = await startFakePlivo({ authId: AUTH_ID, authToken: AUTH_TOKEN });
  stack = await startVoiceStack({
    processes: true,
    telephony: [{ fake: plivo, env: { PLIVO_API_BASE_URL: plivo.apiBaseUrl }, configure: (h) => configurePlivo(h, { authId: AUTH_ID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER }, { plivo_max_concurrent: 5 }) }],
  });
  ({ h, deepgram, openai } = stack);
}, 180_000);

afterAll(() => stack?.stop());

const heardMs = (caller: PlivoCaller) => caller.speechFrames().length * FRAME_MS;
const { events, finalCall, createVoiceAgent } = voiceCallApi(() => h);

const DESTINATIONS = warmDestinations(BILLING, SALES);

async function inboundCall(agentName: string) {
  const fake = await plivo.simulateInbound({
    answerUrl: `${h.api.url}/telephony/plivo/inbound/${agentName}`,
    hangupUrl: `${h.api.url}/telephony/plivo/status`,
    from: '+919812345678',
    to: OUR_NUMBER,
  });
  expect(fake.errors).toEqual([]);
  const { callId } = plivoStreamCredentials(parseExtraHeaders(fake.stream!.extraHeaders))!;
  return { fake, caller: fake.caller!, callId };
}

const scriptAgent = (destination: string, sorry: string, briefings: any[]) => scriptWarmAgent(openai, destination, sorry, briefings);

/** The caller transferred to `destination`, back on a new stream of the same call; the agent said `sorry`. */
async function transferComesBack(agentName: string, destination: string, sorry: string) {
  scriptAgent(destination, sorry, []);
  deepgram.script(['I would like to upgrade my plan.']);
  const { fake, caller, callId } = await inboundCall(agentName);
  await eventually(async () => heardMs(caller) >= 200, 15_000, 20);
  const back = plivo.nextCaller(40_000);
  await caller.say(HELLO_WAV);
  let again = await back;
  // A destination that answered connected first (its briefing stream): the caller's comes after it.
  if (again.callId !== fake.callUuid) again = await plivo.nextCaller(40_000);
  expect(again.callId).toBe(fake.callUuid);
  await eventually(async () => heardMs(again) >= (sorry.length - 2) * MS_PER_CHAR - 100, 20_000, 20);
  await eventually(async () => (await events(callId)).some((e) => e.event_type === 'agent_spoke' && e.data.text === sorry), 10_000);
  expect(fake.transfers.map((u) => new URL(u).pathname)).toEqual([`/telephony/plivo/warm/${callId}/hold`, `/telephony/plivo/warm/${callId}/return`]);
  await again.hangup();
  const call = await finalCall(callId, 20_000);
  expect(call).toMatchObject({ status: 'completed', end_reason: 'user_ended', transfer_summary: null });
  expect(fake.errors).toEqual([]);
  return { callId, fake, list: await events(callId) };
}

describe('warm transfer_call on a Plivo call', () => {
  it('holds the caller in a conference with hold audio, briefs the destination with a summary of the call, and joins them on 1', async () => {
    await createVoiceAgent({ name: 'plivo-warm-desk', prompt: 'You are the front desk.', greeting: 'Hello, front desk.', transfer_destinations: DESTINATIONS });
    const briefings: any[] = [];
    scriptAgent('billing', 'unused', briefings);
    deepgram.script(['I was charged twice for invoice 1234.']);
    const { fake, caller, callId } = await inboundCall('plivo-warm-desk');
    await eventually(async () => heardMs(caller) >= 500, 15_000, 20);
    const human = plivo.nextCaller(30_000);
    await caller.say(HELLO_WAV);

    // The destination is a call of its own (Make Call API), from our number, with machine
    // detection; its answer is a stream to the agent.
    const person = await human;
    const leg = plivo.call(person.callId)!;
    const base = `${h.api.url}/telephony/plivo/warm/${callId}`;
    expect(leg).toMatchObject({ to: BILLING.slice(1), from: OUR_NUMBER.slice(1), direction: 'outbound' });
    expect(leg.params).toMatchObject({ answer_url: `${base}/answer`, hangup_url: `${base}/events`, ring_url: `${base}/events`, ring_timeout: 10, machine_detection: 'true' });
    // A person: the synchronous detection's answer URL request said so.
    expect(leg.callbacks.find((d) => d.kind === 'answer')!.params.Machine).toBe('false');
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
    expect(order.every((t) => types.includes(t))).toBe(true);
    expect(order.map((t) => types.indexOf(t))).toEqual([...order.map((t) => types.indexOf(t))].sort((a, b) => a - b));
    expect(list.find((e) => e.event_type === 'transfer_started')!.data).toMatchObject({ destination: 'billing', mode: 'warm', to: BILLING, hold_audio: 'tone' });
    expect(list.find((e) => e.event_type === 'transfer_started')!.data.warm_unavailable).toBeUndefined();
    expect(list.find((e) => e.event_type === 'transfer_briefing_reply')!.data).toMatchObject({ decision: 'connect' });
    expect(list.find((e) => e.event_type === 'transfer_completed')!.data).toMatchObject({ mode: 'warm', human_call_id: leg.callUuid });
    expect(types).not.toContain('transfer_failed');
    expect(call.transcript.map((t: any) => t.text)).toEqual(['Hello, front desk.', 'I was charged twice for invoice 1234.', 'Please hold while I brief billing.']);

    // Both legs were moved with the Transfer Call API: the caller to the hold, the destination
    // (by its CallUUID, not the request id) to the join; the conference holds both and no agent.
    expect(fake.transfers).toEqual([`${base}/hold?audio=${encodeURIComponent(`${h.api.url}/telephony/plivo/hold-tone.wav`)}`]);
    expect(leg.transfers).toEqual([`${base}/join`]);
    const conference = plivo.conference(`warm-${callId}`)!;
    expect([...conference.members].sort()).toEqual([fake.callUuid, leg.callUuid].sort());
    expect(conference.startedAtMs).not.toBeNull();
    expect(fake.conferences).toEqual([`warm-${callId}`]);
    expect(caller.isOpen).toBe(false);
    await eventually(async () => !person.isOpen, 5_000);
    expect(fake.errors).toEqual([]);
    expect(leg.errors).toEqual([]);
    // The platform hangs up neither leg: they are talking.
    expect(plivo.requests.filter((r) => r.method === 'DELETE')).toEqual([]);

    // The caller heard the wait sound, not silence, all through the briefing.
    const at = (t: string) => new Date(list.find((e) => e.event_type === t)!.timestamp).getTime();
    const [from, to] = [at('transfer_briefing_started'), at('transfer_briefing_completed')];
    const during = fake.held.filter((f) => f.atMs >= from && f.atMs <= to);
    expect(to - from).toBeGreaterThan(2_000);
    expect(during.length * FRAME_MS).toBeGreaterThan((to - from) * 0.8);
    expect(during.filter((f) => f.rms > 300).length / during.length).toBeGreaterThan(0.95);
    const wait = fake.callbacks.find((c) => c.kind === 'conference-wait')!;
    expect(wait.status).toBe(200);
    expect(fake.callbacks.find((c) => c.kind === 'play')!.url).toBe(`${h.api.url}/telephony/plivo/hold-tone.wav`);
  }, 90_000);

  it('brings the caller back to the agent when the destination presses 2, and the agent carries on', async () => {
    await createVoiceAgent({ name: 'plivo-warm-declined', prompt: 'You are the front desk.', greeting: 'Hello.', transfer_destinations: DESTINATIONS });
    const sorry = 'Billing cannot take your call right now. Can I help?';
    scriptAgent('billing', sorry, []);
    deepgram.script(['I was charged twice for invoice 1234.']);
    const { fake, caller, callId } = await inboundCall('plivo-warm-declined');
    await eventually(async () => heardMs(caller) >= 200, 15_000, 20);
    const human = plivo.nextCaller(30_000);
    await caller.say(HELLO_WAV);
    const person = await human;
    await eventually(async () => heardMs(person) >= 2_000, 30_000, 20);
    const back = plivo.nextCaller(30_000);
    person.dtmf('2');
    person.dtmf('#');

    const again = await back;
    expect(again.callId).toBe(fake.callUuid);
    await eventually(async () => heardMs(again) >= (sorry.length - 2) * MS_PER_CHAR - 100, 20_000, 20);
    await eventually(async () => (await events(callId)).some((e) => e.event_type === 'agent_spoke' && e.data.text === sorry), 10_000);
    expect((await h.request('GET', `/api/calls/${callId}`)).body.status).toBe('in_progress');
    // The destination's leg has ended (its stream closed, and hung up); the conference is empty.
    const leg = plivo.call(person.callId)!;
    await eventually(async () => leg.endedAtMs !== undefined, 10_000);
    expect(plivo.conference(`warm-${callId}`)!.members).toEqual([]);

    await again.hangup();
    const call = await finalCall(callId, 20_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
    const list = await events(callId);
    expect(list.find((e) => e.event_type === 'transfer_failed')!.data).toMatchObject({ destination: 'billing', mode: 'warm', reason: 'declined' });
    expect(list.filter((e) => e.event_type === 'call_status' && e.data.status === 'media_connected')).toHaveLength(3);
    expect(call.transcript.map((t: any) => t.text)).toEqual(['Hello.', 'I was charged twice for invoice 1234.', 'Please hold while I brief billing.', sorry]);
    expect(fake.errors).toEqual([]);
  }, 90_000);

  it('brings the caller back when the destination does not answer, is busy, or is a machine', async () => {
    await createVoiceAgent({ name: 'plivo-warm-unanswered', prompt: 'You are the front desk.', greeting: 'Hello.', transfer_destinations: DESTINATIONS });
    const sorry = 'Nobody in sales picked up. Can I help?';

    // Rings out: Plivo's ring_timeout (max_wait_secs) ends the destination's call with `timeout`.
    plivo.setOutcome({ outcome: 'no-answer', ringMs: 5_000 }, SALES);
    const unanswered = await transferComesBack('plivo-warm-unanswered', 'sales', sorry);
    expect(unanswered.list.find((e) => e.event_type === 'transfer_failed')!.data).toMatchObject({ destination: 'sales', reason: 'no answer', provider_status: 'timeout' });
    expect(unanswered.list.map((e) => e.event_type)).not.toContain('transfer_briefing_started');

    plivo.setOutcome({ outcome: 'busy', ringMs: 300 }, SALES);
    const busy = await transferComesBack('plivo-warm-unanswered', 'sales', sorry);
    expect(busy.list.find((e) => e.event_type === 'transfer_failed')!.data).toMatchObject({ destination: 'sales', reason: 'busy', hangup_cause: 'USER_BUSY' });

    // A machine answers: Plivo's synchronous detection (no machine_detection_url) runs no XML until
    // it knows, then asks the answer URL with Machine=true: no briefing, the leg hung up.
    plivo.setOutcome({ outcome: 'answer', ringMs: 200, amd: { machine: true, decidedMs: 1_500 } }, SALES);
    const machine = await transferComesBack('plivo-warm-unanswered', 'sales', sorry);
    expect(machine.list.find((e) => e.event_type === 'transfer_failed')!.data).toMatchObject({ destination: 'sales', reason: 'voicemail', machine: true });
    expect(machine.list.map((e) => e.event_type)).not.toContain('transfer_briefing_started');
    const leg = plivo.calls.find((c) => c.to === SALES.slice(1) && c.callbacks.some((d) => d.kind === 'answer' && d.params.Machine === 'true'))!;
    expect(leg.params.machine_detection).toBe('true');
    expect(leg.params.machine_detection_url).toBeUndefined();
    expect(leg.callbacks.find((d) => d.kind === 'answer')!.body).toContain('<Hangup');
    expect(leg.caller).toBeUndefined();
    await eventually(async () => leg.endedAtMs !== undefined, 10_000);
  }, 150_000);

  it('does not lose the caller when the worker is killed during the briefing: the destination says connect and the transfer completes', async () => {
    await createVoiceAgent({ name: 'plivo-warm-killed', prompt: 'You are the front desk.', greeting: 'Hello.', transfer_destinations: DESTINATIONS });
    scriptAgent('billing', 'unused', []);
    deepgram.script(['I was charged twice for invoice 1234.']);
    const { fake, caller, callId } = await inboundCall('plivo-warm-killed');
    await eventually(async () => heardMs(caller) >= 200, 15_000, 20);
    const human = plivo.nextCaller(30_000);
    await caller.say(HELLO_WAV);
    const person = await human;
    await eventually(async () => heardMs(person) >= 1_000, 30_000, 20);
    // Killed while the agent speaks to the destination: a new worker carries the call on from its
    // history, which holds the answered leg's CallUUID the join needs.
    await stack.restartWorker();
    const briefing = `${SUMMARY} ${CONNECT_PROMPT}`;
    await eventually(async () => heardMs(person) >= (briefing.length - 4) * MS_PER_CHAR - 200, 40_000, 20);
    // This time the destination says it (speech, through the STT) rather than pressing 1.
    deepgram.script(['Yes, connect them.']);
    await person.say(HELLO_WAV);
    const call = await finalCall(callId, 40_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'transferred', transfer_summary: SUMMARY });
    expect([...plivo.conference(`warm-${callId}`)!.members].sort()).toEqual([fake.callUuid, person.callId].sort());
    const list = await events(callId);
    expect(list.filter((e) => e.event_type === 'transfer_completed')).toHaveLength(1);
    expect(list.find((e) => e.event_type === 'transfer_briefing_reply')!.data).toMatchObject({ text: 'Yes, connect them.', decision: 'connect' });
    expect(list.map((e) => e.event_type)).not.toContain('transfer_failed');
  }, 120_000);
});
