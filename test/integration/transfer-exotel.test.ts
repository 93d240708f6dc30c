/**
 * Exotel's Voicebot stream cannot be handed over by API (docs/phone-operations.md, Transfer to a
 * human): an Exotel call of an agent with transfer destinations is never offered transfer_call —
 * neither to a freeform agent nor on a flow node listing it — and a flow pre_action transfer_call
 * records its refusal and the conversation carries on. Real API, worker and gateway processes;
 * the Exotel, Deepgram, Cartesia and OpenAI-compatible fakes.
 */
import path from 'node:path';
import type { FakeDeepgram } from '../fakes/deepgram-server';
import { FRAME_MS, type ExotelCaller } from '../fakes/exotel-caller';
import { startFakeExotel, type FakeExotel } from '../fakes/exotel-server';
import type { FakeOpenAI } from '../fakes/openai-server';
import { eventually } from '../support/fixtures';
import { configureExotel } from '../support/telephony';
import type { Harness } from '../support/harness';
import { startVoiceStack, type VoiceStack } from '../support/voice-stack';
import { voiceCallApi } from '../support/voice-call-api';

const HELLO_WAV = path.join(__dirname, '..', 'fixtures', 'audio', 'hello-appointment.wav');
const CREDS = { accountSid: 'exoteltransfer', apiKey: 'exotel-transfer-key', apiToken: 'exotel-transfer-token-0123456789' };
const OUR_NUMBER = '+918047491898';
const DESTINATIONS = [
  { name: 'billing', phone_number: '+918047000111', description: 'Invoices, refunds and payments', message: 'Connecting you to billing now.' },
  { name: 'sales', sip_uri: 'sip:sales@pbx.example.com', description: 'New plans and upgrades', message: '' },
];

let h: Harness;
let exotel: FakeExotel;
let deepgram: FakeDeepgram;
let openai: FakeOpenAI;
let stack: VoiceStack;

beforeAll(async () => {
  exotel = await startFakeExotel(CREDS);
  stack = await startVoiceStack({
    processes: true,
    telephony: [{ fake: exotel, env: { EXOTEL_API_BASE_URL: exotel.apiBaseUrl }, configure: (h) => configureExotel(h, { ...CREDS, phoneNumber: OUR_NUMBER }, { exotel_max_concurrent: 5 }) }],
  });
  ({ h, deepgram, openai } = stack);
}, 180_000);

afterAll(() => stack?.stop());

const heardMs = (caller: ExotelCaller) => caller.speechFrames().length * FRAME_MS;
const lastMessage = (body: any) => body.messages[body.messages.length - 1];
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function.name);
const { events, finalCall, createVoiceAgent } = voiceCallApi(() => h);

/** Places an outbound Exotel call of `agent`; the caller hears the greeting, then says one thing. */
async function callAndSpeak(agent: string) {
  const next = exotel.nextCaller(20_000);
  const placed = await h.request('POST', '/api/calls/outbound', { body: { phone_number: '+919876543210', agent_name: agent, provider: 'exotel' } });
  expect(placed.status).toBe(201);
  const caller = await next;
  await eventually(async () => heardMs(caller) >= 200, 15_000, 20);
  await caller.say(HELLO_WAV);
  return placed.body.call_id as string;
}

describe('transfer_call on an Exotel call', () => {
  it('is not offered to a freeform agent that has destinations', async () => {
    await createVoiceAgent({ name: 'exotel-desk', prompt: 'You are the front desk.', greeting: 'Hello.', transfer_destinations: DESTINATIONS });
    const offered: string[][] = [];
    openai.setResponder((body) => {
      if (lastMessage(body).role !== 'user') return { content: 'Goodbye.' };
      offered.push(toolNames(body));
      return { content: 'I cannot put you through from here, sorry. Goodbye.', tool_calls: [{ name: 'end_call', arguments: {} }] };
    });
    deepgram.script(['Put me through to billing, please.']);
    const callId = await callAndSpeak('exotel-desk');

    const call = await finalCall(callId, 40_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'agent_ended', provider: 'exotel' });
    expect(offered.length).toBeGreaterThanOrEqual(1);
    for (const names of offered) {
      expect(names).toContain('end_call');
      expect(names).not.toContain('transfer_call');
    }
    const types = (await events(callId)).map((e) => e.event_type);
    expect(types.filter((t) => t.startsWith('transfer_'))).toEqual([]);
  }, 90_000);

  it('is not offered on a flow node listing it; a pre_action transfer is refused and the agent carries on', async () => {
    const agent = await createVoiceAgent({ name: 'exotel-flow', prompt: 'You are the front desk.', greeting: 'Hello.', transfer_destinations: DESTINATIONS });
    const flow = await h.request('PUT', `/api/agents/${agent.id}/flow`, {
      body: {
        nodes: [
          {
            node_key: 'start',
            is_initial: true,
            builtin_tools: ['end_call', 'transfer_call'],
            functions: [{ name: 'wants_billing', description: 'The caller asks about billing', next_node_key: 'handover' }],
          },
          { node_key: 'handover', builtin_tools: ['end_call'], pre_actions: [{ type: 'transfer_call', destination: 'billing' }] },
        ],
      },
    });
    expect(flow.status).toBe(200);
    const offered: string[][] = [];
    let afterRefusal: any = null;
    openai.setResponder((body) => {
      const last = lastMessage(body);
      offered.push(toolNames(body));
      if (last.role === 'user') return { tool_calls: [{ name: 'wants_billing', arguments: {} }] };
      // Entered "handover": its pre_action was refused; the LLM goes on and says so.
      afterRefusal ??= body;
      return { content: 'I cannot transfer you from this line, sorry. Goodbye.', tool_calls: [{ name: 'end_call', arguments: {} }] };
    });
    deepgram.script(['I have a question about my invoice.']);
    const callId = await callAndSpeak('exotel-flow');

    const call = await finalCall(callId, 40_000);
    expect(call).toMatchObject({ status: 'completed', end_reason: 'agent_ended', provider: 'exotel' });
    expect(offered[0]).toEqual(expect.arrayContaining(['wants_billing', 'end_call']));
    for (const names of offered) expect(names).not.toContain('transfer_call');
    expect(afterRefusal).not.toBeNull();

    const list = await events(callId);
    const refused = list.find((e) => e.event_type === 'tool_result' && e.data.function === 'transfer_call');
    expect(refused?.data).toMatchObject({ result: null, error: 'calls through exotel cannot be transferred' });
    expect(list.some((e) => e.event_type === 'transfer_started')).toBe(false);
    const spoke = list.filter((e) => e.event_type === 'agent_spoke').map((e) => e.data.text);
    expect(spoke).toContain('I cannot transfer you from this line, sorry. Goodbye.');
  }, 90_000);
});
