/**
 * An MCP tool call survives its worker dying (docs/tools.md, MCP servers, "What is tested"): the
 * call worker runs in its own process and is killed with SIGKILL while the MCP server holds the
 * tool request unanswered. The `callMcpTool` activity's heartbeat stops, Temporal retries it per
 * its retry policy on a new worker, which opens its own MCP session and calls the tool again; the
 * call goes on with the retry's result, given to the LLM once, and one tool_called/tool_result pair.
 * Real API, PostgreSQL, Temporal and worker process; the LLM is a local fake, the MCP server a real
 * one built with the SDK (test/fakes/mcp-server.ts).
 */
import { IDEMPOTENCY_META } from '../../src/tools/mcp-sessions';
import type { ChildProcess } from 'node:child_process';
import { callWorkflowId } from '../../workflows/call-definitions';
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { createAgent, eventually } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { killHard, spawnWorkerProcess } from '../support/worker-process-control';

const SECRET = 'Bearer mcp-durable-secret-9043';
let h: Harness;
let llm: FakeOpenAI;
let crm: FakeMcpServer;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  llm = await startFakeOpenAI();
  crm = await startFakeMcpServer({ requiredHeaders: { authorization: SECRET } });
  h = await startHarness({ env: { OPENAI_BASE_URL: llm.url } });
});
afterAll(async () => {
  for (const w of workers) await killHard(w);
  await h?.stop();
  await llm?.stop();
  await crm?.stop();
});

async function newWorker() {
  const worker = await spawnWorkerProcess(h, { OPENAI_BASE_URL: llm.url });
  workers.push(worker);
  return worker;
}

const lastMessage = (body: any) => body.messages[body.messages.length - 1];
const seconds = (d: any) => Number(d?.seconds ?? 0) + (d?.nanos ?? 0) / 1e9;

it('retries an MCP tool call whose worker was killed mid-request, and the LLM gets the result once', async () => {
  // A tool timeout far longer than the kill takes: the held request is still in flight when the worker dies.
  const server = await h.request('POST', '/api/mcp-servers', { body: { name: 'crm', url: crm.url, headers: { Authorization: SECRET }, timeout_secs: 20 } });
  expect(server.status).toBe(201);
  expect((await h.request('POST', `/api/mcp-servers/${server.body.id}/refresh`)).status).toBe(200);
  await createAgent(h.db, h.box, { name: 'mcp-durable', greeting: 'Hello, order desk.', mcp_tools: ['crm/track_order'] });
  llm.setResponder((body) => {
    const last = lastMessage(body);
    if (last.role === 'user' && last.content.includes('order')) return { tool_calls: [{ name: 'crm__track_order', arguments: { order: 'A1' } }] };
    if (last.role === 'tool') {
      const result = JSON.parse(last.content);
      return { content: `Order ${result.order} is ${result.status} (attempt ${result.attempt}).` };
    }
    return { content: `You said: ${last.content}` };
  });

  let worker = await newWorker();
  const started = await h.request('POST', '/api/calls/test', { body: { agent_name: 'mcp-durable', phone_number: '+14155550123', custom_parameters: { account: 'A-17' } } });
  expect(started.status).toBe(201);
  const callId = started.body.call_id as string;
  const say = (text: string) => h.request('POST', `/api/calls/${callId}/test/messages`, { body: { text } });
  expect((await say('first turn')).body.replies).toEqual(['You said: first turn']);

  // The MCP server holds the first tool request; the worker is killed while it waits.
  crm.holdNext = 1;
  const toolTurn = say('where is my order?');
  await eventually(async () => crm.calls.some((c) => c.tool === 'track_order'), 30_000, 20);
  await killHard(worker);
  worker = await newWorker();
  const answered = await toolTurn;
  expect(answered.status).toBe(200);
  expect(answered.body.replies).toEqual(['Order A1 is shipped (attempt 2).']);

  // Called twice, with the same arguments (context merged), each on its worker's own session.
  const attempts = crm.calls.filter((c) => c.tool === 'track_order');
  expect(attempts.map((c) => c.args)).toEqual([
    { phone_number: '+14155550123', direction: 'inbound', account: 'A-17', order: 'A1' },
    { phone_number: '+14155550123', direction: 'inbound', account: 'A-17', order: 'A1' },
  ]);
  expect(attempts[1]!.session).not.toBe(attempts[0]!.session);
  // Both attempts carry the same idempotency key in `_meta`, so the server can tell a retry.
  const keys = attempts.map((c) => c.meta?.[IDEMPOTENCY_META]);
  expect(keys[0]).toMatch(new RegExp(`^${callId}:.+`));
  expect(keys[1]).toBe(keys[0]);
  // Neither worker listed the tools: the call used what the refresh stored.
  expect(crm.count('tools/list')).toBe(1);

  expect((await say('thanks')).body.replies).toEqual(['You said: thanks']);
  const ended = await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
  expect(ended.body).toMatchObject({ status: 'completed', end_reason: 'user_ended' });

  // The LLM got the tool's result once: one request answering the tool call, and one tool
  // message in the history of the turn after.
  const toolAnswers = llm.requests.filter((r) => lastMessage(r.body).role === 'tool');
  expect(toolAnswers.map((r) => lastMessage(r.body).content)).toEqual(['{"order":"A1","status":"shipped","attempt":2}']);
  const after = llm.requests.at(-1)!.body;
  expect(lastMessage(after)).toEqual({ role: 'user', content: 'thanks' });
  expect(after.messages.filter((m: any) => m.role === 'tool')).toHaveLength(1);

  // The retry came from the activity's retry policy (attempt 2 of at most 3, heartbeat 3 s).
  const history = await h.temporal.workflow.getHandle(callWorkflowId(callId)).fetchHistory();
  const scheduled = history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callMcpTool');
  expect(scheduled).toHaveLength(1);
  const attributes = scheduled[0]!.activityTaskScheduledEventAttributes!;
  expect(attributes.retryPolicy?.maximumAttempts).toBe(3);
  expect(seconds(attributes.heartbeatTimeout)).toBe(3);
  const startedEvent = history.events!.find((e) => Number(e.activityTaskStartedEventAttributes?.scheduledEventId) === Number(scheduled[0]!.eventId));
  expect(startedEvent?.activityTaskStartedEventAttributes?.attempt).toBe(2);

  // One tool_called and one tool_result, naming server and tool; no lost or duplicated events.
  const trace = (await h.request('GET', `/api/calls/${callId}/events`)).body as Array<{ id: number; event_type: string; data: any }>;
  expect(trace.map((e) => e.id)).toEqual(trace.map((_, i) => i + 1));
  expect(trace.filter((e) => e.event_type === 'tool_called').map((e) => e.data)).toEqual([
    { function: 'crm__track_order', args: { order: 'A1' }, server: 'crm', tool: 'track_order' },
  ]);
  const results = trace.filter((e) => e.event_type === 'tool_result').map((e) => e.data);
  expect(results).toEqual([expect.objectContaining({ server: 'crm', tool: 'track_order', result: { order: 'A1', status: 'shipped', attempt: 2 }, error: null })]);
  expect(ended.body.transcript.map((t: any) => t.text)).toEqual([
    'Hello, order desk.',
    'first turn',
    'You said: first turn',
    'where is my order?',
    'Order A1 is shipped (attempt 2).',
    'thanks',
    'You said: thanks',
  ]);
}, 180_000);
