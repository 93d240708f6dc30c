/**
 * MCP tools in a phone call (docs/tools.md, MCP servers, "What is tested"): an outbound call
 * through the Twilio fake whose LLM calls tools of a real MCP server built with the SDK
 * (test/fakes/mcp-server.ts). The media gateway runs the call's LLM requests; the workflow runs
 * the tool through the `callMcpTool` activity, as on a text call. Asserted: the tool runs with the
 * call's context (number, direction, custom parameters) merged into its arguments, its result is
 * the LLM's next message, the events name server and tool, a failing tool gives the LLM an error
 * and the caller still hears a reply and goes on talking, and the tool list is never fetched on
 * the turn path (only the refresh listed it). Real API, call worker, PostgreSQL, Temporal and
 * media gateway; Twilio, Deepgram, Cartesia and OpenAI are local fakes.
 */
import path from 'node:path';
import { setLogLevel } from '../../src/shared/logger';
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server';
import { FRAME_MS, type TwilioCaller } from '../fakes/twilio-caller';
import { startFakeTwilio, type FakeTwilio } from '../fakes/twilio-server';
import { eventually } from '../support/fixtures';
import type { Harness } from '../support/harness';
import { configureTwilio } from '../support/telephony';
import { voiceCallApi } from '../support/voice-call-api';
import { startVoiceStack, type VoiceStack } from '../support/voice-stack';

const HELLO_WAV = path.join(__dirname, '..', 'fixtures', 'audio', 'hello-appointment.wav');
const ACCOUNT_SID = `AC${'4c'.repeat(16)}`;
const AUTH_TOKEN = 'mcp-voice-test-auth-token-0123';
const OUR_NUMBER = '+15005550006';
const CALLEE = '+14155550188';
const SECRET = 'Bearer mcp-voice-secret-5521';
const MS_PER_CHAR = 60;
const GREETING = 'Acme support, hello.';
const PLAN_REPLY = 'You are on the gold plan.';
const FAILED_REPLY = 'Sorry, I could not do that now.';
const LAST_REPLY = 'Glad to help, goodbye.';
// What the caller says, in order (the Deepgram fake's transcripts of each utterance).
const ASKED = ['What plan am I on?', 'Please refund my last order.', 'Thanks, that is all.'];
const LOOKUP_RESULT = '{"customer_id":"C-42","plan":"gold","balance":42}';
const EXPLODE_ERROR = 'Error: the tool failed (the tool reported an error: database connection lost). Tell the caller you could not complete this right now.';

let stack: VoiceStack;
let h: Harness;
let twilio: FakeTwilio;
let crm: FakeMcpServer;
const api = voiceCallApi(() => h);

beforeAll(async () => {
  setLogLevel('error');
  twilio = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  crm = await startFakeMcpServer({ requiredHeaders: { authorization: SECRET } });
  const configure = (h: Harness) => configureTwilio(h, { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, phoneNumber: OUR_NUMBER });
  stack = await startVoiceStack({ telephony: [{ fake: twilio, env: { TWILIO_API_BASE_URL: twilio.apiBaseUrl }, configure }], alsoStop: [crm] });
  h = stack.h;
  const server = await h.request('POST', '/api/mcp-servers', { body: { name: 'crm', url: crm.url, headers: { Authorization: SECRET }, timeout_secs: 5 } });
  expect(server.status).toBe(201);
  expect((await h.request('POST', `/api/mcp-servers/${server.body.id}/refresh`)).status).toBe(200);
  await api.createVoiceAgent({ name: 'mcp-voice', prompt: 'You help Acme customers.', greeting: GREETING, mcp_tools: ['crm/lookup_customer', 'crm/explode'] });
  stack.openai.setResponder((body) => {
    const last = body.messages[body.messages.length - 1];
    if (last.role === 'tool') return { content: last.content.startsWith('Error:') ? FAILED_REPLY : PLAN_REPLY };
    if (last.role === 'user' && last.content === ASKED[0]) return { tool_calls: [{ name: 'crm__lookup_customer', arguments: { customer_id: 'C-42' } }] };
    if (last.role === 'user' && last.content === ASKED[1]) return { tool_calls: [{ name: 'crm__explode', arguments: { reason: 'refund' } }] };
    return { content: LAST_REPLY };
  });
}, 120_000);

afterAll(() => stack?.stop());

const heardMs = (caller: TwilioCaller) => caller.speechFrames().length * FRAME_MS;
/**
 * Resolves once the caller has heard about `text`'s worth of speech more than `before` ms and the
 * call recorded it spoken whole: the caller speaks next only then, so no reply is cut by barge-in.
 */
async function hears(caller: TwilioCaller, callId: string, before: number, text: string): Promise<void> {
  await eventually(async () => heardMs(caller) >= before + (text.length - 2) * MS_PER_CHAR, 20_000, 20);
  await eventually(async () => (await api.events(callId)).some((e) => e.event_type === 'agent_spoke' && e.data.text === text), 20_000, 50);
}

it('runs the MCP tools the LLM calls with the call context, gives it their results and errors, and never lists tools on the turn path', async () => {
  // The refresh in beforeAll listed the tools once; nothing else has.
  expect(crm.count('tools/list')).toBe(1);
  const methodsBefore = crm.methods.length;
  const firstRequest = stack.openai.requests.length;
  stack.deepgram.script(ASKED);

  const placed = await h.request('POST', '/api/calls/outbound', { body: { phone_number: CALLEE, agent_name: 'mcp-voice', custom_parameters: { account: 'A-17' } } });
  expect(placed.status).toBe(201);
  const callId = placed.body.call_id as string;
  const caller = await twilio.nextCaller(20_000);
  await hears(caller, callId, 0, GREETING);
  for (const [i, reply] of [PLAN_REPLY, FAILED_REPLY, LAST_REPLY].entries()) {
    const before = heardMs(caller);
    await caller.say(HELLO_WAV);
    await hears(caller, callId, before, reply).catch(() => {
      throw new Error(`the caller did not hear "${reply}" after saying "${ASKED[i]}"`);
    });
  }
  await caller.hangup();
  const call = await api.finalCall(callId);
  expect(call.status).toBe('completed');

  // The tools ran on the MCP server with the call's context merged into the LLM's arguments.
  expect(crm.calls).toEqual([
    { tool: 'lookup_customer', args: { phone_number: CALLEE, direction: 'outbound', account: 'A-17', customer_id: 'C-42' }, session: expect.any(String) },
    { tool: 'explode', args: { phone_number: CALLEE, direction: 'outbound', account: 'A-17', reason: 'refund' }, session: crm.calls[0]!.session },
  ]);

  // The LLM got each result as the tool message answering its call, and the error as text.
  const requests = stack.openai.requests.slice(firstRequest).map((r) => r.body as any);
  const toolAnswers = requests.filter((b) => b.messages.at(-1).role === 'tool');
  expect(toolAnswers.map((b) => b.messages.at(-1).content)).toEqual([LOOKUP_RESULT, EXPLODE_ERROR]);
  for (const body of toolAnswers) {
    const [asked, answered] = body.messages.slice(-2);
    expect(asked.tool_calls[0].id).toBe(answered.tool_call_id);
  }
  const offered = (requests[0].tools ?? []).map((t: any) => t.function.name);
  expect(offered).toEqual(expect.arrayContaining(['crm__lookup_customer', 'crm__explode']));
  // After the failure the conversation went on: the last question was answered with the error in its history.
  const last = requests.at(-1);
  expect(last.messages.at(-1)).toEqual({ role: 'user', content: ASKED[2] });
  expect(last.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content)).toEqual([LOOKUP_RESULT, EXPLODE_ERROR]);

  // The events name the server and the tool.
  const trace = await api.events(callId);
  expect(trace.filter((e) => e.event_type === 'tool_called').map((e) => e.data)).toEqual([
    { function: 'crm__lookup_customer', args: { customer_id: 'C-42' }, server: 'crm', tool: 'lookup_customer' },
    { function: 'crm__explode', args: { reason: 'refund' }, server: 'crm', tool: 'explode' },
  ]);
  const results = trace.filter((e) => e.event_type === 'tool_result').map((e) => e.data);
  expect(results).toEqual([
    expect.objectContaining({ function: 'crm__lookup_customer', server: 'crm', tool: 'lookup_customer', result: JSON.parse(LOOKUP_RESULT), error: null }),
    expect.objectContaining({ function: 'crm__explode', server: 'crm', tool: 'explode', result: null, error: 'the tool reported an error: database connection lost' }),
  ]);
  expect(call.transcript.filter((t: any) => t.role === 'assistant').map((t: any) => t.text)).toEqual([GREETING, PLAN_REPLY, FAILED_REPLY, LAST_REPLY]);

  // Not one tool list during the call: the call offers what the refresh stored. The worker opened
  // one session for the first tool call and reused it for the second.
  const during = crm.methods.slice(methodsBefore);
  expect(during.filter((m) => m === 'tools/list')).toEqual([]);
  expect(crm.count('tools/list')).toBe(1);
  expect(during.filter((m) => m === 'initialize')).toHaveLength(1);
  expect(during.filter((m) => m === 'tools/call')).toHaveLength(2);
}, 90_000);
