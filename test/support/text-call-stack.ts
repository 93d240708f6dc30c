/**
 * The conversation engine's stack for text calls (call-engine*.test.ts): real API over HTTP, real
 * Temporal workflow and worker, real PostgreSQL, a fake OpenAI-compatible LLM and a local webhook
 * receiver, with helpers that drive a test call by text. `useTextCallStack()` registers the hooks;
 * the exported bindings hold the running parts once `beforeAll` has run.
 */
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver';
import { startHarness, type Harness } from './harness';

export let h: Harness;
export let llm: FakeOpenAI;
export let hooks: WebhookReceiver;

/**
 * Starts the stack for the file's tests and stops it after. `env` adds to the LLM's (two attempts,
 * 0.2 s apart); `worker: false` leaves starting the call worker to the test.
 */
export function useTextCallStack(options: { env?: Record<string, string>; worker?: boolean } = {}): void {
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    hooks = await startWebhookReceiver();
    h = await startHarness({
      env: { OPENAI_BASE_URL: llm.url, LLM_RETRY_MAX_ATTEMPTS: '2', LLM_RETRY_INITIAL_SECS: '0.2', ...options.env },
      worker: options.worker ?? true,
    });
  });
  afterAll(async () => {
    await h?.stop();
    await llm?.stop();
    await hooks?.stop();
  });
  beforeEach(() => {
    llm.reset();
    hooks.reset();
  });
}

export const lastMessage = (body: any) => body.messages[body.messages.length - 1];
export const systemText = (body: any) => body.messages.filter((m: any) => m.role === 'system').map((m: any) => m.content).join('\n');
export const toolNames = (body: any) => (body.tools ?? []).map((t: any) => t.function.name);

export async function events(callId: string) {
  const res = await h.request('GET', `/api/calls/${callId}/events`);
  expect(res.status).toBe(200);
  return res.body as Array<{ id: number; event_type: string; timestamp: string; data: any }>;
}

export async function startText(agent_name: string, custom_parameters: Record<string, string | number> = {}) {
  const res = await h.request('POST', '/api/calls/test', { body: { agent_name, custom_parameters, phone_number: '+14155550123' } });
  expect(res.status).toBe(201);
  return res.body as { call_id: string; greeting: string | null };
}

export async function say(callId: string, text: string) {
  const res = await h.request('POST', `/api/calls/${callId}/test/messages`, { body: { text } });
  expect(res.status).toBe(200);
  return res.body as { replies: string[]; status: string; node_key: string | null };
}

export async function hangUp(callId: string) {
  const res = await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
  expect(res.status).toBe(200);
  return res.body;
}
