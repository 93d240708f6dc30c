/**
 * No input can wedge a call: values that break naive string handling, text PostgreSQL cannot
 * store, a record write PostgreSQL refuses, a malformed message to the workflow, and a workflow
 * that cannot make progress at all. Each call still answers, ends, and frees its slot — through
 * the real API, Temporal workflow, worker and PostgreSQL.
 */
import { callWorkflowId, utteranceSignal } from '../../workflows/call-definitions';
import { createAgent, createNodes, createTool, eventually } from '../support/fixtures';
import { h, hooks, llm, useTextCallStack } from '../support/text-call-stack';
import type { RunningWorker } from '../../src/worker/worker';

let worker: RunningWorker;

const END_TIMEOUT_SECS = 3;

useTextCallStack({ env: { CALL_END_TIMEOUT_SECS: String(END_TIMEOUT_SECS) }, worker: false });
beforeAll(async () => {
  worker = await h.startWorker();
});

// A wedged call answers nothing: every request here gives up after a while instead of hanging the suite.
const REQUEST_LIMIT_MS = 25_000;

async function post(path: string, body: unknown) {
  const url = `${h.api.url}${path}`;
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${await h.adminToken()}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_LIMIT_MS),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function events(callId: string) {
  return (await h.request('GET', `/api/calls/${callId}/events`)).body as Array<{ id: number; event_type: string; data: any }>;
}

async function startText(agent_name: string, custom_parameters: Record<string, string | number> = {}) {
  const res = await post('/api/calls/test', { agent_name, custom_parameters });
  expect(res).toMatchObject({ status: 201 });
  return res.body.call_id as string;
}

describe('no input can wedge a call', () => {
  it('substitutes call_tool pre-action arguments inside the values: quotes, backslashes and newlines arrive intact', async () => {
    const tool = await createTool(h.db, h.box, { name: 'crm_note', webhook_url: `${hooks.url}/note` });
    const agent = await createAgent(h.db, h.box, { name: 'quote-flow', greeting: 'Hello {{first_name}}.' });
    await createNodes(h.db, agent.id, [
      {
        node_key: 'start',
        is_initial: true,
        pre_actions: [{ type: 'call_tool', tool_id: tool.id, args: { who: '{{first_name}}', note: { tags: ['{{first_name}}', 'vip'], count: 2 }, '{{first_name}}': 'key' } }],
      },
    ]);
    hooks.respond({ status: 200, body: { ok: true } }, { path: '/note' });
    const name = 'Ada "Lady" Lovelace \\ the\nfirst';
    const res = await post('/api/calls/test', { agent_name: 'quote-flow', custom_parameters: { first_name: name } });
    expect(res.status).toBe(201);
    expect(res.body.greeting).toBe(`Hello ${name}.`);
    const request = hooks.requests.find((r) => r.path === '/note')!;
    expect(request.body).toMatchObject({ who: name, note: { tags: [name, 'vip'], count: 2 }, '{{first_name}}': 'key' });
    const ended = await post('/api/calls/end', { call_id: res.body.call_id });
    expect(ended.body).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
  });

  it('stores caller text PostgreSQL cannot hold (NUL, lone surrogates) with replacement characters, and the call goes on', async () => {
    await createAgent(h.db, h.box, { name: 'nul-agent', greeting: 'Hi.' });
    llm.setResponder(() => ({ content: 'Noted.' }));
    const callId = await startText('nul-agent');
    // As the media gateway delivers an STT transcript: a signal straight to the workflow.
    const handle = h.temporal.workflow.getHandle(callWorkflowId(callId));
    await handle.signal(utteranceSignal, { text: 'hello\u0000there' });
    await handle.signal(utteranceSignal, { text: 'caf\ud800 au lait' });
    await eventually(async () => (await events(callId)).filter((e) => e.event_type === 'agent_spoke').length >= 3);
    const turn = await post(`/api/calls/${callId}/test/messages`, { text: 'and now?' });
    expect(turn).toMatchObject({ status: 200, body: { replies: ['Noted.'], status: 'in_progress' } });

    const ended = await post('/api/calls/end', { call_id: callId });
    expect(ended.status).toBe(200);
    expect(ended.body).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
    expect(ended.body.transcript.filter((t: any) => t.role === 'user').map((t: any) => t.text)).toEqual([
      'hello\uFFFDthere',
      'caf\uFFFD au lait',
      'and now?',
    ]);
    expect((await events(callId)).some((e) => e.event_type === 'error')).toBe(false);
  });

  it('ends the call failed with an error event when PostgreSQL refuses its record, keeping what can be kept', async () => {
    await createAgent(h.db, h.box, { name: 'overflow-agent', greeting: 'Hi.' });
    // An OpenAI-compatible server reporting a usage count no INTEGER column holds: no retry fixes that.
    llm.setResponder(() => ({ content: 'Sure.', usage: { prompt_tokens: 3_000_000_000, completion_tokens: 5 } }));
    const callId = await startText('overflow-agent');
    const turn = await post(`/api/calls/${callId}/test/messages`, { text: 'hello' });
    expect(turn).toMatchObject({ status: 200, body: { replies: ['Sure.'] } });

    const call = await eventually(async () => {
      const res = await h.request('GET', `/api/calls/${callId}`);
      return res.body.end_reason ? res.body : null;
    }, 20_000);
    expect(call).toMatchObject({ status: 'failed', end_reason: 'error' });
    expect(call.end_time).not.toBeNull();
    expect(call.transcript.map((t: any) => t.text)).toEqual(['Hi.', 'hello', 'Sure.']);
    const trace = await events(callId);
    const error = trace.find((e) => e.event_type === 'error')!;
    expect(error.data.context).toBe('persistence');
    expect(error.data.message).toMatch(/out of range/);
    expect(trace.some((e) => e.event_type === 'call_ended')).toBe(true);
    // Ending it again answers at once with the final record.
    const ended = await post('/api/calls/end', { call_id: callId });
    expect(ended.body).toMatchObject({ status: 'failed', end_reason: 'error' });
    const description = await h.temporal.workflow.getHandle(callWorkflowId(callId)).describe();
    expect(description.status.name).toBe('COMPLETED');
  });

  it('ignores a malformed message to the workflow instead of failing its task in a loop', async () => {
    await createAgent(h.db, h.box, { name: 'malformed-agent', greeting: 'Hi.' });
    llm.setResponder(() => ({ content: 'Yes?' }));
    const callId = await startText('malformed-agent');
    const handle = h.temporal.workflow.getHandle(callWorkflowId(callId));
    // A gateway of another version sending a number where the workflow expects text.
    await handle.signal(utteranceSignal, { text: 42 } as never);
    const turn = await post(`/api/calls/${callId}/test/messages`, { text: 'hello' });
    expect(turn).toMatchObject({ status: 200, body: { replies: ['Yes?'], status: 'in_progress' } });
    // Events are written after the turn's answer.
    const error = await eventually(async () => (await events(callId)).find((e) => e.event_type === 'error'));
    expect(error.data).toMatchObject({ context: 'workflow' });
    expect(error.data.message).toMatch(/malformed utterance message: text is number/);
    expect((await post('/api/calls/end', { call_id: callId })).body).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
  });

  it('POST /api/calls/end ends a call whose workflow cannot make progress: terminated, recorded as failed', async () => {
    await createAgent(h.db, h.box, { name: 'stuck-agent', greeting: 'Hi.' });
    const callId = await startText('stuck-agent');
    // Nothing runs the workflow any more (every worker gone, or its task failing on every attempt).
    await worker.stop();
    const started = Date.now();
    let ended: Awaited<ReturnType<typeof post>>;
    let elapsedMs: number;
    try {
      ended = await post('/api/calls/end', { call_id: callId });
      elapsedMs = Date.now() - started;
    } finally {
      worker = await h.startWorker();
    }

    expect(ended.status).toBe(200);
    expect(ended.body).toMatchObject({ status: 'failed', end_reason: 'error' });
    expect(ended.body.end_time).not.toBeNull();
    expect(ended.body.duration).toBeGreaterThanOrEqual(0);
    expect(elapsedMs).toBeLessThan((END_TIMEOUT_SECS + 5) * 1000);
    const trace = await events(callId);
    const error = trace.find((e) => e.event_type === 'error')!;
    expect(error.data.context).toBe('workflow');
    expect(error.data.message).toMatch(/did not end the call within 3 s/);
    expect(trace.at(-1)!.event_type).toBe('call_ended');
    expect(trace.map((e) => e.id)).toEqual(trace.map((_, i) => i + 1));
    const description = await h.temporal.workflow.getHandle(callWorkflowId(callId)).describe();
    expect(description.status.name).toBe('TERMINATED');
    // The call is over for good: messages are refused, ending again changes nothing.
    expect((await post(`/api/calls/${callId}/test/messages`, { text: 'hello?' })).status).toBe(409);
    expect((await post('/api/calls/end', { call_id: callId })).body).toMatchObject({ status: 'failed', end_reason: 'error' });
  });
});
