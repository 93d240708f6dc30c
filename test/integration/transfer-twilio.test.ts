/**
 * Transfer to a human on Twilio, end to end through every real part: the API (webhooks, transfer
 * callbacks), the call workflow in a worker process, the media gateway in its own process, and
 * the vendor fakes (Twilio REST with call updates and <Dial>, Deepgram, Cartesia, an OpenAI-
 * compatible LLM). A transfer that is answered ends the call `completed` / `transferred`; one to a
 * busy destination comes back to the agent on a new stream of the same call.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FakeDeepgram } from '../fakes/deepgram-server';
import type { FakeOpenAI } from '../fakes/openai-server';
import { FRAME_MS, type TwilioCaller } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { eventually } from '../support/fixtures';
import { voiceCallApi } from '../support/voice-call-api';
import { configureTwilio } from '../support/telephony';
import type { Harness } from '../support/harness';
import { startVoiceStack, type VoiceStack } from '../support/voice-stack';

const HELLO_WAV = path.join(__dirname, '..', 'fixtures', 'audio', 'hello-appointment.wav');
const ACCOUNT_SID = `AC${'7b'.repeat(16)}`;
const AUTH_TOKEN = 'transfer-test-auth-token-0123456789';
const OUR_NUMBER = '+15005550007';
const BILLING = '+14155550123';
const SALES_SIP = 'sip:sales@pbx.example.com';
const MS_PER_CHAR = 60; // the TTS fake's audio length per character

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
const lastMessage = (body: any) => body.messages[body.messages.length - 1];
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function.name);
const { events, finalCall, createVoiceAgent } = voiceCallApi(() => h);

const DESTINATIONS = [
  { name: 'billing', phone_number: BILLING, description: 'Invoices, refunds and payments', message: 'Connecting you to billing now.' },
  { name: 'sales', sip_uri: SALES_SIP, description: 'New plans and upgrades', message: 'One moment, I am putting you through to sales.' },
];

async function inboundCall(agentName: string) {
  const fake = await twilio.simulateInbound({ webhookUrl: `${h.api.url}/telephony/twilio/inbound/${agentName}`, from: '+14155550142', to: OUR_NUMBER });
  expect(fake.errors).toEqual([]);
  const verb = fake.verbs![0]!;
  if (verb.verb !== 'Connect') throw new Error(`expected <Connect>, got ${fake.twiml}`);
  return { fake, caller: fake.caller!, callId: verb.stream.parameters.call_id! };
}

describe('transfer_call on a Twilio call', () => {
  it('offers the destinations to the LLM, says the message, dials the number and ends completed/transferred when answered', async () => {
    await createVoiceAgent({ name: 'support-line', prompt: 'You are the front desk.', greeting: 'Hello, front desk.', transfer_destinations: DESTINATIONS });
    let offered: any = null;
    openai.setResponder((body) => {
      const last = lastMessage(body);
      if (last.role === 'user' && toolNames(body).includes('transfer_call')) {
        offered = body.tools.find((t: any) => t.function.name === 'transfer_call').function;
        return { tool_calls: [{ name: 'transfer_call', arguments: { destination: 'billing' } }] };
      }
      return { content: 'Sorry?' };
    });
    deepgram.script(['I have a question about my invoice.']);
    const { fake, caller, callId } = await inboundCall('support-line');
    await eventually(async () => heardMs(caller) >= ('Hello, front desk.'.length - 2) * MS_PER_CHAR - 100, 15_000, 20);
    await caller.say(HELLO_WAV);

    const call = await finalCall(callId, 40_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'transferred' });
    // The tool schema names the destinations with their descriptions.
    expect(offered.parameters.properties.destination.enum).toEqual(['billing', 'sales']);
    expect(offered.description).toContain('billing: Invoices, refunds and payments');

    // Twilio got the call update with <Dial> to the number, with our action and answered callback.
    await eventually(async () => fake.dials.length === 1, 10_000);
    expect(fake.redirects[0]).toContain('<Dial');
    expect(fake.dials[0]).toMatchObject({ to: BILLING, noun: 'Number', statusCallbackEvents: ['answered'], outcome: 'answer' });
    expect(fake.dials[0]!.action).toBe(`${h.api.url}/telephony/twilio/transfer/${callId}`);
    expect(fake.callbacks.find((c) => c.kind === 'dial-status')!.status).toBe(204);

    // The caller heard the message before the hand-over; the transcript stops there.
    expect(call.transcript.map((t: any) => t.text)).toEqual(['Hello, front desk.', 'I have a question about my invoice.', 'Connecting you to billing now.']);
    const list = await events(callId);
    const types = list.map((e) => e.event_type);
    expect(types.indexOf('transfer_started')).toBeLessThan(types.indexOf('transfer_completed'));
    expect(list.find((e) => e.event_type === 'transfer_started')!.data).toMatchObject({ destination: 'billing', mode: 'cold', to: BILLING });
    expect(types).not.toContain('transfer_failed');

    // The call record ends at the hand-over, not when the transferred conversation ends; the
    // platform does not hang the transferred caller up.
    const ended = await fake.ended;
    expect(new Date(call.end_time).getTime()).toBeLessThanOrEqual(ended.endedAtMs!);
    expect(twilio.requests.filter((r) => r.params.Status === 'completed')).toEqual([]);
    const action = fake.callbacks.find((c) => c.kind === 'dial-action')!;
    expect(action.params.DialCallStatus).toBe('completed');
    expect(action.body).toContain('<Hangup');
  }, 120_000);

  it('comes back to the agent on a new stream when the destination is busy, and the agent carries on', async () => {
    twilio.setDialOutcome(SALES_SIP, 'busy');
    await createVoiceAgent({ name: 'sales-line', prompt: 'You are the front desk.', greeting: 'Hello.', transfer_destinations: DESTINATIONS });
    const sorry = 'Sales is busy right now. Can I help?';
    openai.setResponder((body) => {
      const last = lastMessage(body);
      if (last.role === 'tool' && String(last.content).includes('did not go through')) return { content: sorry };
      if (last.role === 'user') return { tool_calls: [{ name: 'transfer_call', arguments: { destination: 'sales' } }] };
      return { content: 'Sorry?' };
    });
    deepgram.script(['I would like to upgrade my plan.']);
    const { fake, caller, callId } = await inboundCall('sales-line');
    await eventually(async () => heardMs(caller) >= 200, 15_000, 20);
    const back = twilio.nextCaller(30_000);
    await caller.say(HELLO_WAV);

    // The stream was stopped for the dial; the dial action answered a new stream for the same call.
    const again = await back;
    expect(again).not.toBe(caller);
    expect(fake.dials[0]).toMatchObject({ to: SALES_SIP, noun: 'Sip', outcome: 'busy' });
    expect(fake.callbacks.find((c) => c.kind === 'dial-action')!.body).toContain('<Stream');
    await eventually(async () => heardMs(again) >= (sorry.length - 2) * MS_PER_CHAR - 100, 20_000, 20);
    await eventually(async () => (await events(callId)).some((e) => e.event_type === 'agent_spoke' && e.data.text === sorry), 10_000);
    expect((await h.request('GET', `/api/calls/${callId}`)).body.status).toBe('in_progress');

    await again.hangup();
    const call = await finalCall(callId, 20_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
    // recording_path names the first part; recording_parts lists both.
    expect(path.basename(call.recording_path)).toBe(`${callId}.wav`);
    expect(call.recording_parts.map((p: string) => path.basename(p))).toEqual([`${callId}.wav`, `${callId}-2.wav`]);
    const list = await events(callId);
    expect(list.find((e) => e.event_type === 'transfer_failed')!.data).toMatchObject({ destination: 'sales', reason: 'busy' });
    expect(list.filter((e) => e.event_type === 'call_status' && e.data.status === 'media_connected')).toHaveLength(2);
    expect(call.transcript.map((t: any) => t.text)).toEqual(['Hello.', 'I would like to upgrade my plan.', 'One moment, I am putting you through to sales.', sorry]);

    // Each stream recorded its own part; the API serves them joined, as one WAV.
    const dir = path.join(h.config.dataDir, 'recordings');
    const audioBytes = (file: string) => fs.statSync(path.join(dir, file)).size - 44;
    // Written to its end once the stream closed: the size stops changing.
    await eventually(async () => {
      if (!fs.existsSync(path.join(dir, `${callId}-2.wav`))) return false;
      const before = audioBytes(`${callId}-2.wav`);
      await new Promise((r) => setTimeout(r, 300));
      return before > 0 && audioBytes(`${callId}-2.wav`) === before;
    }, 10_000);
    const res = await fetch(`${h.api.url}/api/recordings/${callId}`, { headers: { authorization: `Bearer ${await h.adminToken()}` } });
    expect(res.status).toBe(200);
    const wav = Buffer.from(await res.arrayBuffer());
    const [first, second] = [audioBytes(`${callId}.wav`), audioBytes(`${callId}-2.wav`)];
    expect(first).toBeGreaterThan(0);
    expect(wav.readUInt32LE(40)).toBe(first + second);
    expect(wav.length).toBe(44 + first + second);
  }, 120_000);
});
