/**
 * Voicemail on outbound Twilio calls end to end: the API dials with asynchronous AMD, the fake
 * Twilio connects the stream and posts AnsweredBy like Twilio, a simulated callee plays an
 * answering machine's greeting and beep (or says "Hello?"), and the real gateway, workflow and
 * speech fakes run the call. Hang up on a machine, leave the message after the beep, and a human
 * whose greeting is not delayed by the detection.
 */
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { setLogLevel } from '../../src/shared/logger';
import type { FakeOpenAI } from '../fakes/openai-server';
import { FRAME_MS, type TwilioCaller } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { eventually } from '../support/fixtures';
import type { Harness } from '../support/harness';
import { startVoiceStack, type VoiceStack } from '../support/voice-stack';
import { configureTwilio } from '../support/telephony';
import { voiceCallApi } from '../support/voice-call-api';
import { HELLO_QUESTION_WAV, machineGreeting, pauseAndBeep } from '../support/voicemail-audio';

const ACCOUNT_SID = `AC${'7c'.repeat(16)}`;
const AUTH_TOKEN = 'voicemail-test-auth-token-0123456';
const OUR_NUMBER = '+15005550006';
const GREETING = 'Hi {{first_name}}, this is the clinic calling about your appointment.';
const MESSAGE = 'Hi {{first_name}}, the clinic here: your appointment is tomorrow at nine. Call us back to change it.';

let h: Harness;
let twilio: FakeTwilio;
let stack: VoiceStack;
let llm: FakeOpenAI;

beforeAll(async () => {
  setLogLevel('error');
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  const configure = (h: Harness) => configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER });
  stack = await startVoiceStack({ telephony: [{ fake: twilio, env: { TWILIO_API_BASE_URL: twilio.apiBaseUrl }, configure }] });
  ({ h, openai: llm } = stack);
  llm.setResponder(() => ({ content: 'Sorry, could you say that again?' }));
}, 180_000);

afterAll(() => stack?.stop());

const { events, finalCall, createVoiceAgent } = voiceCallApi(() => h);
const firstSpeech = (caller: TwilioCaller, afterMs = 0) => caller.speechFrames().find((f) => f.playedAtMs >= afterMs);

async function dial(agentName: string, to: string) {
  const next = twilio.nextCaller(20_000);
  const placed = await h.request('POST', '/api/calls/outbound', { body: { phone_number: to, agent_name: agentName, provider: 'twilio', custom_parameters: { first_name: 'Asha' } } });
  expect(placed.status).toBe(201);
  const caller = await next;
  return { caller, callId: placed.body.call_id as string, fake: twilio.calls.find((c) => c.sid === placed.body.provider_response.sid)! };
}

describe('voicemail on an outbound Twilio call', () => {
  it('asks Twilio for asynchronous AMD; on machine_start the agent stops at once and the call ends completed / voicemail', async () => {
    await createVoiceAgent({ name: 'vm-twilio-hangup', prompt: 'You remind patients.', greeting: GREETING, voicemail: { detect: true, action: 'hang_up' } });
    twilio.setOutcome({ outcome: 'answer', amd: { answeredBy: 'machine', decidedMs: 2500 } }, '+14155550301');
    const { caller, callId, fake } = await dial('vm-twilio-hangup', '+14155550301');
    expect(fake.params).toMatchObject({ MachineDetection: 'Enable', AsyncAmd: 'true', AsyncAmdStatusCallback: `${h.api.url}/telephony/twilio/machine/${callId}`, AsyncAmdStatusCallbackMethod: 'POST' });
    void caller.say(machineGreeting());

    const call = await finalCall(callId, 20_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'voicemail', answered_by: 'machine' });
    const closed = await caller.closed;
    // Twilio decided 2.5 s after the answer; the line closed well before the 7.4 s greeting ended.
    expect(closed.atMs - caller.connectedAtMs).toBeLessThan(5000);
    const amd = fake.callbacks.find((c) => c.kind === 'amd')!;
    expect(amd).toMatchObject({ status: 204, params: expect.objectContaining({ AnsweredBy: 'machine_start' }) });
    // Nothing was played after Twilio's verdict had reached us (plus the line's own buffer).
    const lastFrame = caller.speechFrames().at(-1);
    if (lastFrame) expect(lastFrame.playedAtMs).toBeLessThan(amd.atMs + 1000);
    const list = await events(callId);
    expect(list.filter((e) => e.event_type === 'voicemail_detected').map((e) => e.data)).toEqual([
      expect.objectContaining({ source: 'vendor', reason: 'machine_start', action: 'hang_up' }),
    ]);
    expect(list.some((e) => e.event_type === 'voicemail_message_left')).toBe(false);
    await fake.ended;
    expect(fake.errors).toEqual([]);
  }, 60_000);

  it('leave_message: the gateway hears a long greeting, waits for the beep, then speaks the message once and hangs up', async () => {
    await createVoiceAgent({
      name: 'vm-twilio-message',
      prompt: 'You remind patients.',
      greeting: GREETING,
      voicemail: { detect: true, action: 'leave_message', message: MESSAGE },
    });
    // Twilio's own verdict would come too late here: the gateway's detector decides.
    twilio.setOutcome({ outcome: 'answer', amd: { answeredBy: 'machine', decidedMs: 40_000, greetingEndMs: 40_000 } }, '+14155550302');
    const { caller, callId, fake } = await dial('vm-twilio-message', '+14155550302');
    expect(fake.params).toMatchObject({ MachineDetection: 'DetectMessageEnd', AsyncAmd: 'true' });
    await caller.say(machineGreeting());
    const beep = await caller.say(pauseAndBeep());

    const call = await finalCall(callId, 30_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'voicemail', answered_by: 'machine' });
    const list = await events(callId);
    const detected = list.filter((e) => e.event_type === 'voicemail_detected').map((e) => e.data);
    expect(detected).toEqual([expect.objectContaining({ source: 'gateway', reason: 'long_greeting', action: 'leave_message' })]);
    const text = 'Hi Asha, the clinic here: your appointment is tomorrow at nine. Call us back to change it.';
    const left = list.filter((e) => e.event_type === 'voicemail_message_left').map((e) => e.data);
    expect(left).toEqual([expect.objectContaining({ text, complete: true, after: 'beep', beep_hz: expect.any(Number) })]);
    expect(Math.abs(left[0].beep_hz - 1000)).toBeLessThanOrEqual(15);
    expect(list.filter((e) => e.event_type === 'agent_spoke').at(-1)?.data).toMatchObject({ text });

    // What the machine recorded: the message, all of it, and only after the beep had ended.
    const beepEnd = beep.endedAtMs;
    const afterBeep = caller.speechFrames().filter((f) => f.playedAtMs >= beepEnd);
    expect(afterBeep.length * FRAME_MS).toBeGreaterThanOrEqual((text.length - 5) * 60 - 200);
    const duringWait = caller.speechFrames().filter((f) => f.playedAtMs > caller.connectedAtMs + 5500 && f.playedAtMs < beepEnd);
    expect(duringWait).toEqual([]);
    await caller.closed;
    await fake.ended;
    expect(fake.errors).toEqual([]);
  }, 60_000);

  it('a human who answers hears the greeting no later than without detection (≤ 300 ms), and answered_by is human', async () => {
    const timings: Record<string, number> = {};
    for (const detect of [false, true]) {
      const name = `vm-twilio-human-${detect}`;
      // min_words 3: the callee's "Hello?" over the greeting is a backchannel, not a barge-in.
      await createVoiceAgent({
        name,
        prompt: 'You remind patients.',
        greeting: GREETING,
        pipeline_settings: { ...PIPELINE_DEFAULTS, vad_stop_secs: 0.4, min_words: 3 },
        ...(detect ? { voicemail: { detect: true, action: 'hang_up' } } : {}),
      });
      const to = detect ? '+14155550304' : '+14155550303';
      twilio.setOutcome({ outcome: 'answer', amd: { answeredBy: 'human', decidedMs: 1800 } }, to);
      const { caller, callId, fake } = await dial(name, to);
      void caller.say(HELLO_QUESTION_WAV);
      const first = await eventually(async () => firstSpeech(caller), 15_000, 10);
      timings[String(detect)] = first.playedAtMs - caller.connectedAtMs;
      // The whole greeting plays: nothing stops it.
      const greetingMs = (GREETING.length - 'Hi {{first_name}}'.length + 'Hi Asha'.length) * 60;
      await eventually(async () => caller.speechFrames().length * FRAME_MS >= greetingMs - 200, 15_000, 20);
      if (detect) {
        await eventually(async () => fake.callbacks.some((c) => c.kind === 'amd' && c.status === 204), 10_000, 50);
        expect(fake.callbacks.find((c) => c.kind === 'amd')!.params.AnsweredBy).toBe('human');
      }
      await caller.hangup();
      const call = await finalCall(callId, 20_000);
      expect(call).toMatchObject({ status: 'completed', end_reason: 'user_ended', answered_by: detect ? 'human' : null });
      expect((await events(callId)).some((e) => e.event_type === 'voicemail_detected')).toBe(false);
    }
    if (process.env.VOICEMAIL_TIMINGS) process.stdout.write(`greeting first audio after connect: ${JSON.stringify(timings)}\n`);
    expect(timings.true! - timings.false!).toBeLessThanOrEqual(300);
  }, 90_000);
});
