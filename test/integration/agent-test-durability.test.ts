/**
 * A test run survives its worker dying (docs/agent-tests.md): the worker runs in its own process
 * and is killed with SIGKILL mid-run; a new worker finishes the run with every conversation held
 * exactly once — no attempt lost, none started twice, no caller line sent twice. A worker killed
 * while an LLM turn is waiting on the provider is noticed by the turn's heartbeat within seconds.
 */
import type { ChildProcess } from 'node:child_process';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { bookingAgentReply, createBookingAgent, waitForRun } from '../support/booking-agent';
import { startHarness, type Harness } from '../support/harness';
import { killHard, spawnWorkerProcess } from '../support/worker-process-control';

let h: Harness;
let llm: FakeOpenAI;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  llm = await startFakeOpenAI();
  h = await startHarness({ env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test' } });
});
afterAll(async () => {
  for (const w of workers) await killHard(w);
  await h?.stop();
  await llm?.stop();
});

async function newWorker() {
  const worker = await spawnWorkerProcess(h, { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test' });
  workers.push(worker);
  return worker;
}

const SCRIPT = ['hello', 'I want to book a table', 'friday', 'thanks, bye'];

it('finishes a run after its worker is killed mid-run, losing and repeating no conversation', async () => {
  // Slow agent replies keep several conversations in flight when the worker dies.
  llm.setResponder((body) => ({ ...bookingAgentReply(body), delay_ms: 300 }));
  const agent = await createBookingAgent(h, 'durable-booker', 'http://127.0.0.1:9/never-called');
  const test = await h.request('POST', `/api/agents/${agent.agentId}/tests`, {
    body: {
      name: 'books friday',
      kind: 'scripted',
      script: SCRIPT,
      tool_mocks: { [agent.toolName]: [{ confirmation: 'D-1' }] },
      expectations: [{ type: 'tool_called', tool: agent.toolName, args: { day: 'friday' } }, { type: 'ended_by_agent' }],
    },
  });
  expect(test.status).toBe(201);

  let worker = await newWorker();
  const started = await h.request('POST', `/api/agents/${agent.agentId}/test-runs`, { body: { repeat: 6, concurrency: 2 } });
  expect(started.status).toBe(201);
  const runId = started.body.id as string;

  // Killed once some attempts finished and others are mid-conversation.
  for (;;) {
    const run = (await h.request('GET', `/api/test-runs/${runId}`)).body;
    if (run.progress.done >= 1 && run.progress.running >= 1) break;
    if (run.status !== 'running') throw new Error('the run ended before the worker could be killed');
    await new Promise((r) => setTimeout(r, 50));
  }
  await killHard(worker);
  worker = await newWorker();

  const run = await waitForRun(h, runId, 180_000);
  expect(run.status).toBe('completed');
  expect(run.progress).toMatchObject({ total: 6, done: 6, running: 0, passed: 6, failed: 0 });
  expect(run.tests[0].results[0]).toMatchObject({ pass_rate: 1, passed: true });
  const attempts = run.tests[0].attempts;
  expect(attempts.map((a: any) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6]);

  // One call per attempt, no more: a restarted attempt did not open a second conversation.
  const calls = (await h.request('GET', '/api/calls?page_size=100&include_tests=true')).body.calls.filter((c: any) => c.metadata.test_run_id === runId);
  expect(calls).toHaveLength(6);
  expect(new Set(calls.map((c: any) => c.id))).toEqual(new Set(attempts.map((a: any) => a.call_id)));
  for (const call of calls) {
    expect(call).toMatchObject({ status: 'completed', end_reason: 'agent_ended' });
    const events = (await h.request('GET', `/api/calls/${call.id}/events`)).body as any[];
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    // Each caller line was said exactly once, in order.
    expect(events.filter((e) => e.event_type === 'user_spoke').map((e) => e.data.text)).toEqual(SCRIPT);
    expect(events.filter((e) => e.event_type === 'call_ended')).toHaveLength(1);
  }
}, 240_000);

it('retries an LLM turn whose worker died mid-request within seconds (its heartbeat), not at its minute-long timeout', async () => {
  // Every reply takes 2 s, so the worker can be killed while a request is in flight.
  llm.setResponder((body) => ({ ...bookingAgentReply(body), delay_ms: 2000 }));
  const agent = await createBookingAgent(h, 'slow-booker', 'http://127.0.0.1:9/never-called');
  const test = await h.request('POST', `/api/agents/${agent.agentId}/tests`, {
    body: { name: 'books friday, slowly', kind: 'scripted', script: SCRIPT, tool_mocks: { [agent.toolName]: [{ confirmation: 'D-2' }] }, expectations: [{ type: 'ended_by_agent' }] },
  });
  expect(test.status).toBe(201);
  const worker = await newWorker();
  const before = llm.requests.length;
  const started = await h.request('POST', `/api/agents/${agent.agentId}/test-runs`, { body: { repeat: 1, concurrency: 1 } });
  expect(started.status).toBe(201);
  // The second LLM request of the conversation has arrived: it is in flight for 2 s.
  while (llm.requests.length < before + 2) await new Promise((r) => setTimeout(r, 10));
  await killHard(worker);
  const killedAt = Date.now();
  await newWorker();

  const run = await waitForRun(h, started.body.id, 120_000);
  expect(run.progress).toMatchObject({ total: 1, done: 1, passed: 1 });
  // The start-to-close timeout alone would hold the turn for 60 s after the kill.
  expect(Date.now() - killedAt).toBeLessThan(45_000);
}, 180_000);
