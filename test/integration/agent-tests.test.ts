/**
 * Agent tests end to end (docs/agent-tests.md): simulated and scripted tests run as real text
 * calls through Temporal, PostgreSQL and the API, against the fake LLM playing the agent, the
 * simulated caller and the judge. Each kind of expectation passes and fails; tools are mocked.
 */
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { scriptJudge, scriptPersona } from '../fakes/llm-roles';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver';
import { bookingAgentReply, createBookingAgent, waitForRun } from '../support/booking-agent';
import { startHarness, type Harness } from '../support/harness';

let h: Harness;
let llm: FakeOpenAI;
let hooks: WebhookReceiver;
let agent: { agentId: string; toolName: string; version: number };

beforeAll(async () => {
  llm = await startFakeOpenAI();
  hooks = await startWebhookReceiver();
  h = await startHarness({ env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test' }, worker: true });
  agent = await createBookingAgent(h, 'booker', `${hooks.url}/book`);
  llm.setResponder(bookingAgentReply);
  scriptPersona(llm, ["I'd like to book a table", 'Friday please', 'Thanks, bye'], { persona: 'happy diner' });
  scriptPersona(llm, ["I'd like to book a table"], { persona: 'quitter' });
  scriptJudge(llm, (criterion, { conversation }) => {
    if (criterion.includes('confirms the booking')) return { pass: conversation.includes('Booked'), reason: 'the agent said it booked' };
    return { pass: false, reason: 'no discount was offered' };
  });
});
afterAll(async () => {
  await h?.stop();
  await llm?.stop();
  await hooks?.stop();
});

async function createTest(body: Record<string, unknown>) {
  const res = await h.request('POST', `/api/agents/${agent.agentId}/tests`, { body });
  if (res.status !== 201) throw new Error(`test: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string };
}

async function run(testIds: string[], extra: Record<string, unknown> = {}) {
  const started = await h.request('POST', `/api/agents/${agent.agentId}/test-runs`, { body: { test_ids: testIds, ...extra } });
  if (started.status !== 201) throw new Error(`run: ${started.status} ${JSON.stringify(started.body)}`);
  return waitForRun(h, started.body.id);
}

const byTest = (run: any, id: string) => run.tests.find((t: any) => t.test_id === id);
const outcomes = (attempt: any) => Object.fromEntries(attempt.result.expectations.map((e: any) => [e.description, e.passed]));

it('passes a simulated test on every kind of expectation, and fails each one that does not hold', async () => {
  const mocks = { [agent.toolName]: [{ confirmation: 'B-42' }] };
  const happy = await createTest({
    name: 'books friday',
    kind: 'simulated',
    persona: 'A happy diner who wants a table on Friday for two.',
    tool_mocks: mocks,
    expectations: [
      { type: 'tool_called', tool: agent.toolName, args: { day: 'Friday' } },
      { type: 'tool_not_called', tool: 'cancel_booking' },
      { type: 'node_reached', node_key: 'booking' },
      { type: 'ended_by_agent' },
      { type: 'end_reason', end_reason: 'agent_ended' },
      { type: 'within_turns', turns: 3 },
      { type: 'said', phrase: 'confirmation B-42' },
      { type: 'never_said', phrase: 'sorry' },
    ],
    judge: ['The agent confirms the booking'],
  });
  const wrong = await createTest({
    name: 'wrong expectations',
    kind: 'simulated',
    persona: 'A happy diner who wants a table on Friday for two.',
    tool_mocks: mocks,
    expectations: [
      { type: 'tool_called', tool: agent.toolName, args: { day: 'monday' } },
      { type: 'tool_not_called', tool: agent.toolName },
      { type: 'node_reached', node_key: 'payment' },
      { type: 'end_reason', end_reason: 'idle_timeout' },
      { type: 'within_turns', turns: 2 },
      { type: 'said', phrase: 'see you soon' },
      { type: 'never_said', phrase: 'booked' },
    ],
    judge: ['The agent offers a discount'],
  });
  const quits = await createTest({
    name: 'caller hangs up',
    kind: 'simulated',
    persona: 'A quitter who hangs up after one line.',
    expectations: [{ type: 'ended_by_agent' }, { type: 'within_turns', turns: 3 }],
  });

  const result = await run([happy.id, wrong.id, quits.id]);
  expect(result.status).toBe('completed');
  expect(result.progress).toMatchObject({ total: 3, done: 3, running: 0, passed: 1, failed: 2 });
  expect(result.passed).toBe(false);

  const [ok] = byTest(result, happy.id).attempts;
  expect(ok.passed).toBe(true);
  expect(Object.values(outcomes(ok))).toEqual(Array(8).fill(true));
  expect(ok.result.judge).toEqual([{ criterion: 'The agent confirms the booking', passed: true, reason: 'the agent said it booked' }]);
  expect(ok.result.transcript.map((t: any) => t.text)).toEqual([
    'Chez Test, how can I help?',
    "I'd like to book a table",
    'Which day would you like?',
    'Friday please',
    'Booked, confirmation B-42.',
    'Thanks, bye',
    'Goodbye!',
  ]);
  expect(ok.result).toMatchObject({ end_reason: 'agent_ended', ended_by: 'agent', turns: 3, unmocked_tools: [] });
  expect(ok.result.usage.agent.prompt_tokens).toBeGreaterThan(0);
  expect(ok.result.usage.simulator.prompt_tokens).toBeGreaterThan(0);
  expect(ok.result.usage.judge.prompt_tokens).toBeGreaterThan(0);
  expect(byTest(result, happy.id).results[0]).toMatchObject({ attempts: 1, passed_attempts: 1, pass_rate: 1, passed: true });
  // Tools answered from the mocks: the webhook was never called.
  expect(hooks.requests).toHaveLength(0);

  const [bad] = byTest(result, wrong.id).attempts;
  expect(bad.passed).toBe(false);
  expect(bad.result.expectations.every((e: any) => !e.passed)).toBe(true);
  const detail = Object.fromEntries(bad.result.expectations.map((e: any) => [e.expectation.type, e.detail]));
  expect(detail.tool_called).toBe(`${agent.toolName} was called with {"day":"friday","party":2}`);
  expect(detail.node_reached).toBe('nodes entered: greet → booking');
  expect(detail.end_reason).toBe('the call ended with agent_ended');
  expect(detail.within_turns).toBe('the call ended after 3 caller turns');
  expect(detail.never_said).toBe('the agent said: "Booked, confirmation B-42."');
  expect(bad.result.judge).toEqual([{ criterion: 'The agent offers a discount', passed: false, reason: 'no discount was offered' }]);

  // The simulated caller hung up: the agent did not end the call, the call ended within its turns.
  const [hung] = byTest(result, quits.id).attempts;
  expect(hung.result).toMatchObject({ ended_by: 'caller', end_reason: 'user_ended', turns: 1 });
  expect(outcomes(hung)).toEqual({ 'the agent ends the call': false, 'the call ends within 3 caller turns': true });
}, 180_000);

it('reports unmocked tools, and a scripted test that runs out of lines did not end the call', async () => {
  const scripted = await createTest({
    name: 'scripted unmocked',
    kind: 'scripted',
    script: ['I want to book', 'friday'],
    expectations: [{ type: 'ended_by_agent' }, { type: 'tool_called', tool: agent.toolName }, { type: 'said', phrase: 'booking failed' }],
  });
  const result = await run([scripted.id]);
  const [attempt] = byTest(result, scripted.id).attempts;
  expect(attempt.result.unmocked_tools).toEqual([agent.toolName]);
  expect(result.unmocked_tools).toEqual([agent.toolName]);
  expect(byTest(result, scripted.id).results[0].unmocked_tools).toEqual([agent.toolName]);
  expect(attempt.result).toMatchObject({ ended_by: 'limit', end_reason: 'user_ended', turns: 2 });
  expect(outcomes(attempt)).toEqual({
    'the agent ends the call': false,
    [`tool ${agent.toolName} is called`]: true,
    'the agent says "booking failed"': true,
  });
  // The tool's error result is in the call's own events, where the LLM got it.
  const events = (await h.request('GET', `/api/calls/${attempt.call_id}/events`)).body as any[];
  const toolResult = events.find((e) => e.event_type === 'tool_result' && e.data.function === agent.toolName);
  expect(toolResult.data).toMatchObject({ error: `tool ${agent.toolName} is not mocked in this test`, mocked: false });
  expect(hooks.requests).toHaveLength(0);
}, 120_000);

it('repeats each test and compares its pass rate with its threshold', async () => {
  // The judge passes every other attempt of each criterion: a pass rate of one half.
  const seen = new Map<string, number>();
  scriptJudge(llm, (criterion) => {
    const n = (seen.get(criterion) ?? 0) + 1;
    seen.set(criterion, n);
    return { pass: n % 2 === 1, reason: `attempt ${n}` };
  });
  const lenient = await createTest({ name: 'flaky lenient', kind: 'scripted', script: ['hello'], judge: ['Flaky criterion A'], pass_threshold: 0.5 });
  const strict = await createTest({ name: 'flaky strict', kind: 'scripted', script: ['hello'], judge: ['Flaky criterion B'], pass_threshold: 0.75 });
  const result = await run([lenient.id, strict.id], { repeat: 4, concurrency: 3 });
  expect(result.progress).toMatchObject({ total: 8, done: 8, passed: 4, failed: 4 });
  expect(byTest(result, lenient.id).results[0]).toMatchObject({ attempts: 4, passed_attempts: 2, pass_rate: 0.5, passed: true });
  expect(byTest(result, strict.id).results[0]).toMatchObject({ attempts: 4, passed_attempts: 2, pass_rate: 0.5, passed: false });
  expect(byTest(result, lenient.id).attempts.map((a: any) => a.attempt)).toEqual([1, 2, 3, 4]);
  expect(result.passed).toBe(false);
  // Four distinct calls per test, each marked with its run and left out of the call list.
  const calls = new Set(result.tests.flatMap((t: any) => t.attempts.map((a: any) => a.call_id)));
  expect(calls.size).toBe(8);
  const listed = await h.request('GET', '/api/calls?page_size=100');
  expect(listed.body.calls.filter((c: any) => calls.has(c.id))).toEqual([]);
  const withTests = await h.request('GET', '/api/calls?page_size=100&include_tests=true');
  const testCalls = withTests.body.calls.filter((c: any) => calls.has(c.id));
  expect(testCalls).toHaveLength(8);
  expect(testCalls[0].metadata).toMatchObject({ test_run_id: result.id });
  const stats = await h.request('GET', '/api/agents/stats');
  expect(stats.body.total_calls).toBe(0);
  expect((await h.request('GET', `/api/agents/${agent.agentId}`)).body.total_calls).toBe(0);
}, 180_000);

it('validates tests and runs with clear errors', async () => {
  const bad = async (path: string, body: unknown) => h.request('POST', path, { body });
  const tests = `/api/agents/${agent.agentId}/tests`;
  expect(await bad(tests, { name: 'x', kind: 'simulated' })).toMatchObject({ status: 422, body: { detail: 'persona: is required for a simulated test' } });
  expect(await bad(tests, { name: 'x', kind: 'scripted', script: [] })).toMatchObject({ status: 422, body: { detail: 'script: needs at least one caller utterance' } });
  expect((await bad(tests, { name: 'x', kind: 'scripted', script: ['hi'], expectations: [{ type: 'same_tools' }] })).status).toBe(422);
  expect((await bad(tests, { name: 'x', kind: 'scripted', script: ['hi'], expectations: [{ type: 'said' }] })).body.detail).toMatch(/^expectations\.0\.phrase: /);
  expect((await bad(tests, { name: 'books friday', kind: 'scripted', script: ['hi'] })).status).toBe(409);
  const runs = `/api/agents/${agent.agentId}/test-runs`;
  expect((await bad(runs, { agent_version: 999 })).body.detail).toMatch(/^agent_version: version 999 of this agent is not stored/);
  expect((await bad(runs, { concurrency: 1000 })).body.detail).toBe('concurrency: at most 5 (AGENT_TEST_MAX_CONCURRENCY)');
  expect((await bad(runs, { test_ids: ['00000000-0000-4000-8000-000000000000'] })).status).toBe(422);
  expect((await h.request('GET', '/api/test-runs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  expect((await h.request('GET', `/api/agents/${agent.agentId}/tests`, { token: null })).status).toBe(401);
}, 60_000);

it('cancels a running run: its conversation is hung up and the attempt says so', async () => {
  llm.addRule({ anyMessage: 'take your time', reply: { content: 'Let me think about that.', delay_ms: 1500 } });
  const slow = await createTest({ name: 'slow caller', kind: 'scripted', script: ['take your time', 'take your time', 'take your time'] });
  const started = await h.request('POST', `/api/agents/${agent.agentId}/test-runs`, { body: { test_ids: [slow.id] } });
  for (;;) {
    const run = (await h.request('GET', `/api/test-runs/${started.body.id}`)).body;
    if (run.tests[0].attempts.length) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const canceled = await h.request('POST', `/api/test-runs/${started.body.id}/cancel`);
  expect(canceled.status).toBe(200);
  expect(canceled.body.status).toBe('canceled');
  const [attempt] = canceled.body.tests[0].attempts;
  expect(attempt).toMatchObject({ status: 'error', passed: false, result: { error: 'the run was canceled' } });
  const call = await h.request('GET', `/api/calls/${attempt.call_id}`);
  expect(call.body).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
  expect((await h.request('POST', `/api/test-runs/${started.body.id}/cancel`)).status).toBe(409);
}, 60_000);
