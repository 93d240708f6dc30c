/**
 * A call survives its worker dying: the worker runs in a separate process that is killed with
 * SIGKILL between turns and during a tool call; a new worker picks the call up and it continues
 * with no lost or duplicated events and an intact transcript.
 */
import type { ChildProcess } from 'node:child_process';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver';
import { createAgent, createTool } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { killHard, spawnWorkerProcess } from '../support/worker-process-control';

let h: Harness;
let llm: FakeOpenAI;
let hooks: WebhookReceiver;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  llm = await startFakeOpenAI();
  hooks = await startWebhookReceiver();
  h = await startHarness({ env: { OPENAI_BASE_URL: llm.url } });
});
afterAll(async () => {
  for (const w of workers) await killHard(w);
  await h?.stop();
  await llm?.stop();
  await hooks?.stop();
});

async function newWorker() {
  const worker = await spawnWorkerProcess(h, { OPENAI_BASE_URL: llm.url });
  workers.push(worker);
  return worker;
}

const lastMessage = (body: any) => body.messages[body.messages.length - 1];

it('continues a call after the worker is killed between turns and during a tool call', async () => {
  const tool = await createTool(h.db, h.box, { name: 'order_status', webhook_url: `${hooks.url}/orders`, timeout_secs: 8 });
  await createAgent(h.db, h.box, { name: 'durable-agent', greeting: 'Hello, order desk.', tool_ids: [tool.id] });
  llm.setResponder((body) => {
    const last = lastMessage(body);
    if (last.role === 'user' && last.content.includes('order')) return { tool_calls: [{ name: 'order_status', arguments: { order: 'A1' } }] };
    if (last.role === 'tool') return { content: `Order status: ${JSON.parse(last.content).status}.` };
    return { content: `You said: ${last.content}` };
  });

  let worker = await newWorker();
  const started = await h.request('POST', '/api/calls/test', { body: { agent_name: 'durable-agent' } });
  expect(started.status).toBe(201);
  const callId = started.body.call_id as string;
  const say = (text: string) => h.request('POST', `/api/calls/${callId}/test/messages`, { body: { text } });

  expect((await say('first turn')).body.replies).toEqual(['You said: first turn']);

  // 1. Killed between turns: the next message waits for a new worker, then is answered.
  await killHard(worker);
  const pending = say('second turn');
  worker = await newWorker();
  expect((await pending).body.replies).toEqual(['You said: second turn']);

  // 2. Killed while the tool webhook is in flight: the activity is retried with the same key.
  hooks.respond({ delay_ms: 1500, body: { status: 'slow' } }, { path: '/orders' });
  hooks.respond({ body: { status: 'shipped' } }, { path: '/orders', times: 5 });
  const toolTurn = say('where is my order?');
  const firstAttempt = await hooks.waitForRequest((r) => r.path === '/orders', 30_000);
  await killHard(worker);
  worker = await newWorker();
  const answered = await toolTurn;
  expect(answered.status).toBe(200);
  expect(answered.body.replies).toEqual(['Order status: shipped.']);
  const attempts = hooks.requests.filter((r) => r.path === '/orders');
  expect(attempts.length).toBeGreaterThanOrEqual(2);
  expect(new Set(attempts.map((r) => r.headers['idempotency-key']))).toEqual(new Set([firstAttempt.headers['idempotency-key']]));

  expect((await say('thanks')).body.replies).toEqual(['You said: thanks']);
  const ended = await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
  expect(ended.body).toMatchObject({ status: 'completed', end_reason: 'user_ended' });

  // No lost or duplicated events, transcript intact.
  const trace = (await h.request('GET', `/api/calls/${callId}/events`)).body as Array<{ id: number; event_type: string; data: any }>;
  expect(trace.map((e) => e.id)).toEqual(trace.map((_, i) => i + 1));
  const count = (type: string) => trace.filter((e) => e.event_type === type).length;
  expect(count('call_started')).toBe(1);
  expect(count('user_spoke')).toBe(4);
  expect(count('tool_called')).toBe(1);
  expect(count('tool_result')).toBe(1);
  expect(count('call_ended')).toBe(1);
  expect(ended.body.transcript.map((t: any) => t.text)).toEqual([
    'Hello, order desk.',
    'first turn',
    'You said: first turn',
    'second turn',
    'You said: second turn',
    'where is my order?',
    'Order status: shipped.',
    'thanks',
    'You said: thanks',
  ]);
}, 180_000);
