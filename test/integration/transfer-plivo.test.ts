/**
 * Transfer to a human on Plivo, end to end (API, worker process, gateway process, fakes): the
 * Transfer Call API with aleg_url answering <Dial>; a flow pre_action transfer answered, and a
 * tool transfer to a busy number coming back to the agent on a new stream of the same call.
 */
import path from 'node:path';
import type { FakeDeepgram } from '../fakes/deepgram-server';
import type { FakeOpenAI } from '../fakes/openai-server';
import { FRAME_MS, type PlivoCaller } from '../fakes/plivo-caller';
import { startFakePlivo, type FakePlivo } from '../fakes/plivo-server';
import { eventually } from '../support/fixtures';
import { voiceCallApi } from '../support/voice-call-api';
import { configurePlivo } from '../support/telephony';
import type { Harness } from '../support/harness';
import { startVoiceStack, type VoiceStack } from '../support/voice-stack';

const HELLO_WAV = path.join(__dirname, '..', 'fixtures', 'audio', 'hello-appointment.wav');
const AUTH_ID = 'MAPLIVOTRANSFERTEST1';
const AUTH_TOKEN = 'plivo-transfer-test-auth-token-01';
const OUR_NUMBER = '+918047491898';
const BILLING = '+918047000111';
const MS_PER_CHAR = 60;

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
const lastMessage = (body: any) => body.messages[body.messages.length - 1];
const { events, finalCall, createVoiceAgent } = voiceCallApi(() => h);
const DESTINATIONS = [{ name: 'billing', phone_number: BILLING, description: 'Invoices and payments', message: 'Connecting you to billing.' }];

async function placeCall(agentName: string) {
  const next = plivo.nextCaller(20_000);
  const placed = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+918047000999', agent_name: agentName } });
  expect(placed.status).toBe(201);
  return { callId: placed.body.call_id as string, caller: await next };
}

describe('transfer_call on a Plivo call', () => {
  it('a flow pre_action transfers through the Transfer Call API; answered, the call ends completed/transferred', async () => {
    // A cold destination (warm ones: warm-transfer-plivo.test.ts).
    const agent = await createVoiceAgent({ name: 'plivo-desk', prompt: 'You are the front desk.', greeting: 'Hello.', transfer_destinations: DESTINATIONS });
    const flow = await h.request('PUT', `/api/agents/${agent.id}/flow`, {
      body: {
        nodes: [
          { node_key: 'start', is_initial: true, functions: [{ name: 'wants_billing', description: 'The caller asks about billing', next_node_key: 'handover' }] },
          { node_key: 'handover', pre_actions: [{ type: 'transfer_call', destination: 'billing' }] },
        ],
      },
    });
    expect(flow.status).toBe(200);
    openai.setResponder((body) => (lastMessage(body).role === 'user' ? { tool_calls: [{ name: 'wants_billing', arguments: {} }] } : { content: 'Sorry?' }));
    deepgram.script(['I have a question about my invoice.']);
    const { callId, caller } = await placeCall('plivo-desk');
    await eventually(async () => heardMs(caller) >= 200, 15_000, 20);
    await caller.say(HELLO_WAV);

    const call = await finalCall(callId, 40_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'transferred' });
    const fake = plivo.call(call.provider_call_sid)!;
    expect(fake.transfers[0]).toBe(`${h.api.url}/telephony/plivo/transfer/${callId}/dial?to=%2B918047000111`);
    expect(fake.dials[0]).toMatchObject({ to: BILLING.slice(1), action: `${h.api.url}/telephony/plivo/transfer/${callId}`, outcome: 'answer' });
    const list = await events(callId);
    const started = list.find((e) => e.event_type === 'transfer_started')!.data;
    expect(started).toMatchObject({ destination: 'billing', mode: 'cold' });
    expect(started.warm_unavailable).toBeUndefined();
    expect(list.map((e) => e.event_type)).toContain('transfer_completed');
    expect(call.transcript[call.transcript.length - 1].text).toBe('Connecting you to billing.');
    // The transferred caller is not hung up by the platform.
    expect(plivo.requests.filter((r) => r.method === 'DELETE')).toEqual([]);
  }, 120_000);

  it('a busy destination comes back to the agent on a new stream', async () => {
    plivo.setDialOutcome(BILLING, 'busy');
    await createVoiceAgent({ name: 'plivo-busy', prompt: 'You are the front desk.', greeting: 'Hello.', transfer_destinations: DESTINATIONS });
    const sorry = 'Billing is busy. Can I help?';
    openai.setResponder((body) => {
      const last = lastMessage(body);
      if (last.role === 'tool' && String(last.content).includes('did not go through')) return { content: sorry };
      if (last.role === 'user') return { tool_calls: [{ name: 'transfer_call', arguments: { destination: 'billing' } }] };
      return { content: 'Sorry?' };
    });
    deepgram.script(['I have a question about my invoice.']);
    const { callId, caller } = await placeCall('plivo-busy');
    await eventually(async () => heardMs(caller) >= 200, 15_000, 20);
    const back = plivo.nextCaller(30_000);
    await caller.say(HELLO_WAV);
    const again = await back;
    await eventually(async () => heardMs(again) >= (sorry.length - 2) * MS_PER_CHAR - 100, 20_000, 20);
    await eventually(async () => (await events(callId)).some((e) => e.event_type === 'agent_spoke' && e.data.text === sorry), 10_000);
    await again.hangup();
    const call = await finalCall(callId, 20_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
    expect((await events(callId)).find((e) => e.event_type === 'transfer_failed')!.data).toMatchObject({ destination: 'billing', reason: 'busy' });
    expect(call.transcript.map((t: any) => t.text)).toEqual(['Hello.', 'I have a question about my invoice.', 'Connecting you to billing.', sorry]);
  }, 120_000);
});
