/**
 * Voicemail on outbound Plivo and Exotel calls end to end (Twilio: voicemail-twilio.test.ts).
 * Plivo runs its machine detection (machine_detection_url, `Machine`=true/false, signed) beside the
 * gateway's detector; Exotel has none, so the gateway's detector alone decides. Each: hang up on a
 * machine, the message after the beep, a human whose greeting is not delayed.
 */
import { PIPELINE_DEFAULTS } from '../../src/shared/catalog';
import { setLogLevel } from '../../src/shared/logger';
import type { PhoneCaller } from '../fakes/phone-caller';
import type { FakeOpenAI } from '../fakes/openai-server';
import { startFakeExotel, type FakeExotel } from '../fakes/exotel-server';
import { startFakePlivo, type FakePlivo } from '../fakes/plivo-server';
import { eventually } from '../support/fixtures';
import type { Harness } from '../support/harness';
import { startVoiceStack, type VoiceStack } from '../support/voice-stack';
import { configureExotel, configurePlivo } from '../support/telephony';
import { voiceCallApi } from '../support/voice-call-api';
import { HELLO_QUESTION_WAV, machineGreeting, pauseAndBeep } from '../support/voicemail-audio';

const PLIVO = { authId: 'MAVOICEMAILTESTAUTHID', authToken: 'plivo-voicemail-test-token-0123' };
const EXOTEL = { accountSid: 'exotelvm1', apiKey: 'exotel-vm-key', apiToken: 'exotel-vm-token-0123456789' };
const OUR_NUMBER = '+918047491899';
const FRAME_MS = 20;
const GREETING = 'Namaste {{first_name}}, this is the clinic calling about your appointment.';
const MESSAGE = 'Namaste {{first_name}}, your appointment is tomorrow at nine. Please call us back to change it.';
const MESSAGE_TEXT = 'Namaste Asha, your appointment is tomorrow at nine. Please call us back to change it.';

let h: Harness;
let plivo: FakePlivo;
let exotel: FakeExotel;
let stack: VoiceStack;
let llm: FakeOpenAI;

beforeAll(async () => {
  setLogLevel('error');
  plivo = await startFakePlivo(PLIVO);
  exotel = await startFakeExotel(EXOTEL);
  stack = await startVoiceStack({
    telephony: [
      { fake: plivo, env: { PLIVO_API_BASE_URL: plivo.apiBaseUrl }, configure: (h) => configurePlivo(h, { ...PLIVO, phoneNumber: OUR_NUMBER }) },
      { fake: exotel, env: { EXOTEL_API_BASE_URL: exotel.apiBaseUrl }, configure: (h) => configureExotel(h, { ...EXOTEL, phoneNumber: OUR_NUMBER }) },
    ],
  });
  ({ h, openai: llm } = stack);
  llm.setResponder(() => ({ content: 'Sorry, could you say that again?' }));
}, 180_000);

afterAll(() => stack?.stop());

const { events, finalCall, createVoiceAgent } = voiceCallApi(() => h);

interface Vendor {
  name: 'plivo' | 'exotel';
  /** Scripts who answers the number (Plivo's detection result; Exotel has none). */
  script(to: string, amd: { machine: boolean; decidedMs: number } | null): void;
  nextCaller(): Promise<PhoneCaller>;
  /** The fake's record of the call: its create params, callbacks, end. */
  fakeCall(callId: string, sid: string): { params: Record<string, unknown>; callbacks: Array<{ kind: string; status: number; params: Record<string, string> }>; errors: string[]; ended: Promise<unknown> };
}

const VENDORS: Vendor[] = [
  {
    name: 'plivo',
    script: (to, amd) => plivo.setOutcome({ outcome: 'answer', ...(amd ? { amd } : {}) }, to),
    nextCaller: () => plivo.nextCaller(20_000),
    fakeCall: (_callId, sid) => plivo.calls.find((c) => c.requestUuid === sid)! as never,
  },
  {
    name: 'exotel',
    script: (to) => exotel.setOutcome('answer', to),
    nextCaller: () => exotel.nextCaller(20_000),
    fakeCall: (_callId, sid) => exotel.calls.find((c) => c.sid === sid)! as never,
  },
];

async function dial(vendor: Vendor, agentName: string, to: string) {
  const next = vendor.nextCaller();
  const placed = await h.request('POST', '/api/calls/outbound', { body: { phone_number: to, agent_name: agentName, provider: vendor.name, custom_parameters: { first_name: 'Asha' } } });
  expect(placed.status).toBe(201);
  const caller = await next;
  const callId = placed.body.call_id as string;
  return { caller, callId, fake: vendor.fakeCall(callId, placed.body.provider_response.sid) };
}

describe.each(VENDORS)('voicemail on an outbound $name call', (vendor) => {
  const number = (n: number) => `+9198765${vendor.name === 'plivo' ? '1' : '2'}${String(n).padStart(4, '0')}`;

  it('hang_up: a machine is found (the vendor or the gateway), the agent stops and the call ends completed / voicemail', async () => {
    const name = `vm-${vendor.name}-hangup`;
    await createVoiceAgent({ name, prompt: 'You remind patients.', greeting: GREETING, voicemail: { detect: true, action: 'hang_up' } });
    const to = number(1);
    vendor.script(to, { machine: true, decidedMs: 2500 });
    const { caller, callId, fake } = await dial(vendor, name, to);
    if (vendor.name === 'plivo') {
      expect(fake.params).toMatchObject({ machine_detection: 'true', machine_detection_url: `${h.api.url}/telephony/plivo/machine/${callId}`, machine_detection_method: 'POST' });
    }
    void caller.say(machineGreeting(caller.format.sampleRate));
    const call = await finalCall(callId, 20_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'voicemail', answered_by: 'machine' });
    const closed = await caller.closed;
    const detected = (await events(callId)).filter((e) => e.event_type === 'voicemail_detected').map((e) => e.data);
    if (vendor.name === 'plivo') {
      // Plivo said so at 2.5 s, before the gateway's 4 s bound.
      expect(detected).toEqual([expect.objectContaining({ source: 'vendor', reason: 'Machine=true' })]);
      expect(fake.callbacks.find((c) => c.kind === 'machine-detection')).toMatchObject({ status: 204, params: expect.objectContaining({ Machine: 'true' }) });
      expect(closed.atMs - caller.connectedAtMs).toBeLessThan(4500);
    } else {
      expect(detected).toEqual([expect.objectContaining({ source: 'gateway', reason: 'long_greeting' })]);
      expect(closed.atMs - caller.connectedAtMs).toBeLessThan(6500);
    }
    await fake.ended;
    expect(fake.errors).toEqual([]);
  }, 60_000);

  it('leave_message: the message is spoken once, after the beep, and the machine records all of it', async () => {
    const name = `vm-${vendor.name}-message`;
    await createVoiceAgent({ name, prompt: 'You remind patients.', greeting: GREETING, voicemail: { detect: true, action: 'leave_message', message: MESSAGE } });
    const to = number(2);
    vendor.script(to, { machine: true, decidedMs: 3000 });
    const { caller, callId, fake } = await dial(vendor, name, to);
    const rate = caller.format.sampleRate;
    await caller.say(machineGreeting(rate));
    const beep = await caller.say(pauseAndBeep(rate));
    const call = await finalCall(callId, 30_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'voicemail', answered_by: 'machine' });
    const list = await events(callId);
    const left = list.filter((e) => e.event_type === 'voicemail_message_left').map((e) => e.data);
    expect(left).toEqual([expect.objectContaining({ text: MESSAGE_TEXT, complete: true, after: 'beep' })]);
    const afterBeep = caller.speechFrames().filter((f) => f.playedAtMs >= beep.endedAtMs);
    expect(afterBeep.length * FRAME_MS).toBeGreaterThanOrEqual((MESSAGE_TEXT.length - 5) * 60 - 200);
    // Between the verdict and the beep's end the line was silent (the greeting was cut).
    const verdictAt = vendor.name === 'plivo' ? 3000 : 5000;
    expect(caller.speechFrames().filter((f) => f.playedAtMs > caller.connectedAtMs + verdictAt + 700 && f.playedAtMs < beep.endedAtMs)).toEqual([]);
    await caller.closed;
    await fake.ended;
    expect(fake.errors).toEqual([]);
  }, 60_000);

  it('a human hears the greeting no later than without detection (≤ 300 ms); answered_by human', async () => {
    const timings: Record<string, number> = {};
    for (const detect of [false, true]) {
      const name = `vm-${vendor.name}-human-${detect}`;
      await createVoiceAgent({
        name,
        prompt: 'You remind patients.',
        greeting: GREETING,
        pipeline_settings: { ...PIPELINE_DEFAULTS, vad_stop_secs: 0.4, min_words: 3 },
        ...(detect ? { voicemail: { detect: true, action: 'leave_message', message: MESSAGE } } : {}),
      });
      const to = number(detect ? 4 : 3);
      vendor.script(to, { machine: false, decidedMs: 1800 });
      const { caller, callId } = await dial(vendor, name, to);
      void caller.say(HELLO_QUESTION_WAV);
      const first = await eventually(async () => caller.speechFrames()[0], 15_000, 10);
      timings[String(detect)] = first.playedAtMs - caller.connectedAtMs;
      const greetingMs = 'Namaste Asha, this is the clinic calling about your appointment.'.length * 60;
      await eventually(async () => caller.speechFrames().length * FRAME_MS >= greetingMs - 200, 15_000, 20);
      await new Promise((r) => setTimeout(r, 2000)); // past the vendor's verdict and the gateway's
      await caller.hangup();
      const call = await finalCall(callId, 20_000);
      expect(call).toMatchObject({ status: 'completed', end_reason: 'user_ended', answered_by: detect ? 'human' : null });
      expect((await events(callId)).some((e) => e.event_type.startsWith('voicemail_'))).toBe(false);
    }
    if (process.env.VOICEMAIL_TIMINGS) process.stdout.write(`${vendor.name} greeting first audio after connect: ${JSON.stringify(timings)}\n`);
    expect(timings.true! - timings.false!).toBeLessThanOrEqual(300);
  }, 90_000);
});
