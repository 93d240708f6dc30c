/**
 * Replay tests (docs/agent-tests.md): a real call of the booking agent becomes a test; replayed
 * against the same version it passes with no diff, and a prompt change that stops the agent from
 * booking Fridays is caught, turn by turn, and side by side with the old version.
 */
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver';
import { BOOKING_PROMPT, bookingAgentReply, createBookingAgent, waitForRun, WEEKENDS_ONLY } from '../support/booking-agent';
import { startHarness, type Harness } from '../support/harness';

let h: Harness;
let llm: FakeOpenAI;
let hooks: WebhookReceiver;

beforeAll(async () => {
  llm = await startFakeOpenAI();
  hooks = await startWebhookReceiver();
  h = await startHarness({ env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test' }, worker: true });
  llm.setResponder(bookingAgentReply);
});
afterAll(async () => {
  await h?.stop();
  await llm?.stop();
  await hooks?.stop();
});

/** A real text call: the caller books Friday and says goodbye; the webhook confirms B-7. */
async function recordedCall(agentName: string) {
  hooks.respond({ body: { confirmation: 'B-7' } }, { path: '/book' });
  const started = await h.request('POST', '/api/calls/test', { body: { agent_name: agentName } });
  expect(started.status).toBe(201);
  const callId = started.body.call_id as string;
  for (const text of ['I want to book a table', 'Friday', 'Great, bye']) {
    const turn = await h.request('POST', `/api/calls/${callId}/test/messages`, { body: { text } });
    expect(turn.status).toBe(200);
  }
  const call = await waitForEnd(callId);
  expect(call).toMatchObject({ status: 'completed', end_reason: 'agent_ended' });
  return callId;
}

async function waitForEnd(callId: string) {
  for (let i = 0; i < 100; i++) {
    const call = (await h.request('GET', `/api/calls/${callId}`)).body;
    if (call.status === 'completed' || call.status === 'failed') return call;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the call did not end');
}

it('replays a recorded call: passes on the same version, catches a prompt change turn by turn', async () => {
  const agent = await createBookingAgent(h, 'replay-booker', `${hooks.url}/book`);
  const callId = await recordedCall('replay-booker');
  const webhookCalls = hooks.requests.length;

  const created = await h.request('POST', `/api/agents/${agent.agentId}/tests/from-call/${callId}`, { body: {} });
  expect(created.status).toBe(201);
  const test = created.body;
  expect(test).toMatchObject({ kind: 'replay', source_call_id: callId, expectations: [{ type: 'same_tools' }, { type: 'same_nodes' }, { type: 'same_end' }] });
  expect(test.recording.turns.map((t: any) => t.caller)).toEqual([null, 'I want to book a table', 'Friday', 'Great, bye']);
  expect(test.recording.tool_results).toEqual({ [agent.toolName]: [{ confirmation: 'B-7' }] });

  const same = await runTests(agent.agentId, { test_ids: [test.id] });
  const [attempt] = same.tests[0].attempts;
  expect(attempt.passed).toBe(true);
  expect(attempt.result.diff.changed_turns).toBe(0);
  expect(attempt.result.transcript.map((t: any) => t.text)).toContain('Booked, confirmation B-7.');
  // The tool answered from the recording, not from the webhook.
  expect(hooks.requests.length).toBe(webhookCalls);

  // The prompt changes: Fridays are refused.
  const patched = await h.request('PATCH', `/api/agents/${agent.agentId}`, { body: { prompt: `${BOOKING_PROMPT} ${WEEKENDS_ONLY}` } });
  expect(patched.body.version).toBe(agent.version + 1);
  const changed = await runTests(agent.agentId, { test_ids: [test.id], compare_version: agent.version });
  expect(changed.agent_version).toBe(agent.version + 1);
  expect(changed.tests[0].results.map((r: any) => [r.version, r.pass_rate, r.passed])).toEqual([
    [agent.version + 1, 0, false],
    [agent.version, 1, true],
  ]);
  expect(changed.passed).toBe(false);
  const now = changed.tests[0].attempts.find((a: any) => a.version === agent.version + 1);
  const tools = now.result.expectations.find((e: any) => e.expectation.type === 'same_tools');
  expect(tools).toMatchObject({ passed: false, detail: `recorded: start_booking({}), ${agent.toolName}({"day":"friday","party":2}); now: start_booking({})` });
  const diff = now.result.diff.turns;
  expect(diff.map((t: any) => [t.turn, t.replies_changed, t.tools_changed])).toEqual([
    [0, false, false],
    [1, true, false],
    [2, true, true],
    [3, false, false],
  ]);
  expect(diff[2]).toMatchObject({
    caller: 'Friday',
    recorded: { replies: ['Booked, confirmation B-7.'], tool_calls: [{ name: agent.toolName, args: { day: 'friday', party: 2 } }] },
    replayed: { replies: ['Sorry, we only take weekend bookings.'], tool_calls: [] },
  });
  const before = changed.tests[0].attempts.find((a: any) => a.version === agent.version);
  expect(before.result.diff.changed_turns).toBe(0);

  // The agent's runs, newest first, with their pass rates but not their attempts.
  const runs = (await h.request('GET', `/api/agents/${agent.agentId}/test-runs`)).body;
  expect(runs.map((r: any) => [r.id, r.passed, r.compare_version])).toEqual([
    [changed.id, false, agent.version],
    [same.id, true, null],
  ]);
  expect(runs[0].tests[0]).not.toHaveProperty('attempts');
  expect(runs[0].tests[0].results.map((r: any) => r.pass_rate)).toEqual([0, 1]);

  // Both versions are stored, and the tests travel with the agent's bundle.
  const versions = await h.request('GET', `/api/agents/${agent.agentId}/versions`);
  expect(versions.body.map((v: any) => v.version).slice(0, 2)).toEqual([agent.version + 1, agent.version]);
  const bundle = await h.request('GET', `/api/agents/${agent.agentId}/export`);
  expect(bundle.body.tests).toHaveLength(1);
  expect(bundle.body.tests[0]).toMatchObject({ kind: 'replay', name: test.name, recording: test.recording });
  const copy = await h.request('POST', '/api/agents/import', { body: { ...bundle.body, agent: { ...bundle.body.agent, name: 'replay-booker-copy' } } });
  expect(copy.status).toBe(201);
  expect(copy.body.tests_count).toBe(1);
  const copied = await h.request('GET', `/api/agents/${copy.body.agent.id}/tests`);
  expect(copied.body[0]).toMatchObject({ kind: 'replay', recording: test.recording });
}, 180_000);

it('refuses a replay of a call of another agent or one still in progress', async () => {
  const agent = await createBookingAgent(h, 'other-booker', `${hooks.url}/book`);
  const other = await createBookingAgent(h, 'third-booker', `${hooks.url}/book`);
  const started = await h.request('POST', '/api/calls/test', { body: { agent_name: 'other-booker' } });
  const callId = started.body.call_id as string;
  const running = await h.request('POST', `/api/agents/${agent.agentId}/tests/from-call/${callId}`, { body: {} });
  expect(running).toMatchObject({ status: 409, body: { detail: 'The call is in_progress; only a finished call can be replayed' } });
  const wrong = await h.request('POST', `/api/agents/${other.agentId}/tests/from-call/${callId}`, { body: {} });
  expect(wrong).toMatchObject({ status: 422, body: { detail: 'call_id: the call was handled by agent "other-booker", not this one' } });
  await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
}, 60_000);

async function runTests(agentId: string, body: Record<string, unknown>) {
  const started = await h.request('POST', `/api/agents/${agentId}/test-runs`, { body });
  if (started.status !== 201) throw new Error(`run: ${started.status} ${JSON.stringify(started.body)}`);
  return waitForRun(h, started.body.id);
}
