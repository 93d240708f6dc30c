/**
 * The analysis is a step of the call's workflow: a worker killed (SIGKILL) while the analysis's LLM
 * request is in flight is replaced, the request is made again from the new worker once the old
 * attempt's heartbeat times out, and the call ends up with exactly one analysis and one webhook.
 */
import type { ChildProcess } from 'node:child_process';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver';
import { eventually } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { killHard, spawnWorkerProcess } from '../support/worker-process-control';

let h: Harness;
let llm: FakeOpenAI;
let hooks: WebhookReceiver;
const workers: ChildProcess[] = [];
const ENV = { ANALYSIS_RETRY_INITIAL_SECS: '0.2' };

beforeAll(async () => {
  llm = await startFakeOpenAI();
  hooks = await startWebhookReceiver();
  h = await startHarness({ env: { OPENAI_BASE_URL: llm.url, ...ENV } });
});
afterAll(async () => {
  for (const w of workers) await killHard(w);
  await h?.stop();
  await llm?.stop();
  await hooks?.stop();
});

async function newWorker() {
  const worker = await spawnWorkerProcess(h, { OPENAI_BASE_URL: llm.url, ...ENV });
  workers.push(worker);
  return worker;
}

it('produces exactly one analysis and one webhook delivery when the worker dies during the analysis', async () => {
  const agent = await h.request('POST', '/api/agents', {
    body: {
      name: 'durable-analysis',
      prompt: 'You book appointments.',
      analysis: { fields: { booked: { type: 'boolean', description: 'booked' } }, success_criteria: 'Booked.' },
      webhook_url: `${hooks.url}/crm`,
      webhook_events: ['analysis_completed'],
    },
  });
  expect(agent.status).toBe(201);
  llm.setResponder(() => ({ content: 'You are booked.' }));
  const answer = { summary: 'Booked.', fields: { booked: true }, success: true, success_reason: 'It was booked.' };
  // The first request hangs long enough to kill its worker in the middle of it.
  llm.setStructuredResponder(() => (llm.structuredRequests.length === 1 ? { object: answer, delay_ms: 5_000 } : { object: answer }));

  let worker = await newWorker();
  const started = await h.request('POST', '/api/calls/test', { body: { agent_name: 'durable-analysis' } });
  const callId = started.body.call_id as string;
  expect((await h.request('POST', `/api/calls/${callId}/test/messages`, { body: { text: 'Book me for Friday.' } })).status).toBe(200);
  const ended = await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
  expect(ended.body).toMatchObject({ status: 'completed' });

  await eventually(async () => llm.structuredRequests.length === 1, 20_000);
  await killHard(worker);
  worker = await newWorker();

  const call = await eventually(async () => {
    const c = (await h.request('GET', `/api/calls/${callId}`)).body;
    return c.analysis_status === 'done' ? c : null;
  }, 60_000);
  expect(call.analysis).toMatchObject({ fields: { booked: true }, success: true });
  expect(llm.structuredRequests).toHaveLength(2);

  const events = (await h.request('GET', `/api/calls/${callId}/events`)).body as Array<{ id: number; event_type: string }>;
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  expect(events.filter((e) => e.event_type === 'analysis_completed')).toHaveLength(1);
  expect(events.filter((e) => e.event_type === 'call_ended')).toHaveLength(1);

  await hooks.waitForRequest((r) => r.path === '/crm', 30_000);
  await new Promise((r) => setTimeout(r, 2000));
  const deliveries = hooks.requests.filter((r) => r.path === '/crm');
  expect(deliveries).toHaveLength(1);
  expect(deliveries[0]!.body).toMatchObject({ type: 'analysis_completed', call_id: callId, data: { analysis: { success: true } } });
}, 120_000);
