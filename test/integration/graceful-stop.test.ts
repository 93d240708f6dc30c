/**
 * Workers and API instances stop as a deploy needs (docs/deployment.md, "Draining"). A worker sent
 * SIGTERM (its own process, signals handled as by `npm run worker`) lets the activity it is running
 * finish and exits 0, and Temporal gives the call's next steps to another worker; an API instance
 * stopping takes no new connection but answers the requests in flight, and ends event streams
 * rather than waiting for them. Real PostgreSQL and Temporal; the LLM and the tool backend are fakes.
 */
import type { ChildProcess } from 'node:child_process';
import { startApi } from '../../src/api/server';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver';
import { createAgent, createTool, eventually } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { exitOf, killHard, spawnWorkerProcess } from '../support/worker-process-control';

const GRACE_SECS = 10;

let h: Harness;
let llm: FakeOpenAI;
let hooks: WebhookReceiver;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  llm = await startFakeOpenAI();
  hooks = await startWebhookReceiver();
  h = await startHarness({ env: { OPENAI_BASE_URL: llm.url, SHUTDOWN_GRACE_SECS: String(GRACE_SECS) } });
  const tool = await createTool(h.db, h.box, { name: 'order_status', webhook_url: `${hooks.url}/orders`, timeout_secs: 8 });
  await createAgent(h.db, h.box, { name: 'order-desk', greeting: 'Hello, order desk.', tool_ids: [tool.id] });
});
afterAll(async () => {
  for (const w of workers) await killHard(w);
  await h?.stop();
  await llm?.stop();
  await hooks?.stop();
});

const lastMessage = (body: any) => body.messages[body.messages.length - 1];

it('a worker stopped during a tool call finishes it, exits 0, and another worker carries the call on', async () => {
  llm.setResponder((body) => {
    const last = lastMessage(body);
    if (last.role === 'user' && last.content.includes('order')) return { tool_calls: [{ name: 'order_status', arguments: { order: 'A1' } }] };
    if (last.role === 'tool') return { content: `Order status: ${JSON.parse(last.content).status}.` };
    return { content: `You said: ${last.content}` };
  });
  const worker = await spawnWorkerProcess(h, { OPENAI_BASE_URL: llm.url, SHUTDOWN_GRACE_SECS: String(GRACE_SECS) });
  workers.push(worker);
  const exited = exitOf(worker);
  const started = await h.request('POST', '/api/calls/test', { body: { agent_name: 'order-desk' } });
  expect(started.status).toBe(201);
  const callId = started.body.call_id as string;
  const say = (text: string) => h.request('POST', `/api/calls/${callId}/test/messages`, { body: { text } });
  expect((await say('first turn')).body.replies).toEqual(['You said: first turn']);

  // The tool's backend takes 3 s; a retried attempt would get another answer.
  hooks.respond({ delay_ms: 3000, body: { status: 'packed' } }, { path: '/orders' });
  hooks.respond({ body: { status: 'retried' } }, { path: '/orders', times: 5 });
  const toolTurn = say('where is my order?');
  const request = await hooks.waitForRequest((r) => r.path === '/orders', 30_000);
  worker.kill('SIGTERM');
  // The deploy's new worker: the call's next steps run there.
  await h.startWorker();

  const answered = await toolTurn;
  expect(answered.status).toBe(200);
  expect(answered.body.replies).toEqual(['Order status: packed.']);
  expect(hooks.requests.filter((r) => r.path === '/orders')).toHaveLength(1);
  const exit = await exited;
  expect(exit).toMatchObject({ code: 0, signal: null });
  // It stayed until its activity had its answer.
  expect(exit.atMs).toBeGreaterThanOrEqual(request.received_at.getTime() + 3000);

  expect((await say('thanks')).body.replies).toEqual(['You said: thanks']);
  const ended = await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
  expect(ended.body).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
}, 120_000);

it('an API instance stopping answers the requests in flight, takes no new connection and ends event streams', async () => {
  // A second API instance on the same database and Temporal, as a deployment runs several.
  const api = await startApi(h.ctx, 0, '127.0.0.1');
  const headers = { authorization: `Bearer ${await h.adminToken()}`, 'content-type': 'application/json' };
  llm.setResponder(() => ({ content: 'A considered answer.', delay_ms: 2500 }));
  const started = await h.request('POST', '/api/calls/test', { body: { agent_name: 'order-desk' } });
  const callId = started.body.call_id as string;
  const stream = await fetch(`${api.url}/api/calls/${callId}/events/stream`, { headers });
  expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const asked = llm.requests.length;
  const inFlight = fetch(`${api.url}/api/calls/${callId}/test/messages`, { method: 'POST', headers, body: JSON.stringify({ text: 'tell me something' }) });
  await eventually(async () => llm.requests.length > asked);

  const stopping = api.stop();
  const stopAt = Date.now();
  await expect(fetch(`${api.url}/healthz`)).rejects.toThrow();
  const res = await inFlight;
  expect(res.status).toBe(200);
  expect(((await res.json()) as { replies: string[] }).replies).toEqual(['A considered answer.']);
  // The event stream was ended (its client reconnects elsewhere), not waited for.
  expect(await stream.text()).toContain('data:');
  await stopping;
  expect(Date.now() - stopAt).toBeLessThan(GRACE_SECS * 1000);

  await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
}, 60_000);
