/**
 * Post-call analysis end to end over the API, the call workflow in a real Temporal server and real
 * PostgreSQL, against the OpenAI-compatible fake (structured answers scripted apart from the
 * conversation): the analysis of a text call and its signed webhook, LLM errors retried, answers
 * that fail the schema asked again then recorded as an error, a call without caller speech
 * skipped, the forced tool call of a provider without JSON-schema mode, POST /api/calls/end not
 * waiting for the analysis, re-runs, and the list filters.
 */
import { Webhook } from 'standardwebhooks';
import { callWorkflowId } from '../../workflows/call-definitions';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from '../fakes/webhook-receiver';
import { eventually } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';

let h: Harness;
let llm: FakeOpenAI;
let hooks: WebhookReceiver;

beforeAll(async () => {
  llm = await startFakeOpenAI();
  hooks = await startWebhookReceiver();
  h = await startHarness({
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-test', GROQ_API_KEY: 'gsk-test', GROQ_BASE_URL: llm.url, ANALYSIS_RETRY_INITIAL_SECS: '0.2' },
    worker: true,
  });
}, 60_000);
afterAll(async () => {
  await h?.stop();
  await llm?.stop();
  await hooks?.stop();
});
afterEach(() => {
  llm.reset();
  hooks.reset();
});

const BOOKING_ANALYSIS = {
  summary_prompt: 'One sentence: what the caller wanted and what was agreed.',
  fields: {
    booked: { type: 'boolean', description: 'an appointment was booked' },
    date: { type: 'date', description: 'the day of the appointment' },
    service: { type: 'enum', description: 'what the appointment is for', enum: ['checkup', 'cleaning'] },
  },
  required: ['booked'],
  success_criteria: 'The caller ends the call with an appointment booked.',
};
const GOOD_ANSWER = {
  summary: 'The caller booked a checkup for December 3rd.',
  fields: { booked: true, date: '2026-12-03', service: 'checkup' },
  success: true,
  success_reason: 'An appointment was booked.',
};

async function createAgent(name: string, extra: Record<string, unknown> = {}) {
  const res = await h.request('POST', '/api/agents', {
    body: { name, prompt: 'You book dental appointments.', greeting: 'Hello, dental clinic.', analysis: BOOKING_ANALYSIS, ...extra },
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; webhook_secret: string; analysis: Record<string, unknown> };
}

/** A text call: the caller's lines, each answered by the conversation script, then hung up. */
async function textCall(agentName: string, lines: string[]) {
  const started = await h.request('POST', '/api/calls/test', { body: { agent_name: agentName } });
  expect(started.status).toBe(201);
  const callId = started.body.call_id as string;
  for (const text of lines) expect((await h.request('POST', `/api/calls/${callId}/test/messages`, { body: { text } })).status).toBe(200);
  const ended = await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
  expect(ended.status).toBe(200);
  return { callId, ended: ended.body };
}

const getCall = async (callId: string) => (await h.request('GET', `/api/calls/${callId}`)).body;
const analysed = (callId: string, timeoutMs = 20_000) =>
  eventually(async () => {
    const call = await getCall(callId);
    return call.analysis_status && call.analysis_status !== 'pending' ? call : null;
  }, timeoutMs);
const events = async (callId: string) => (await h.request('GET', `/api/calls/${callId}/events`)).body as Array<{ id: number; event_type: string; data: any }>;
const analysisHooks = (callId: string) => hooks.requests.filter((r) => (r.body as any)?.type === 'analysis_completed' && (r.body as any)?.call_id === callId);

describe('post-call analysis of a text call', () => {
  it('records the summary, fields and verdict, counts its tokens apart and delivers one signed webhook', async () => {
    const agent = await createAgent('dental-booking', { webhook_url: `${hooks.url}/events`, webhook_events: ['call_ended', 'analysis_completed'] });
    expect(agent.analysis).toMatchObject({ enabled: true, required: ['booked'], llm_provider: null, llm_model: null });
    llm.setResponder(() => ({ content: 'You are booked for a checkup on December 3rd. Goodbye!', usage: { prompt_tokens: 50, completion_tokens: 12 } }));
    llm.enqueueStructured({ object: GOOD_ANSWER, usage: { prompt_tokens: 400, completion_tokens: 60 } });

    const { callId, ended } = await textCall('dental-booking', ['I would like a checkup on the third of December.']);
    expect(ended).toMatchObject({ status: 'completed', end_reason: 'user_ended' });
    const call = await analysed(callId);
    expect(call.analysis_status).toBe('done');
    expect(call.analysis).toEqual({ ...GOOD_ANSWER, model: 'gpt-4o-mini', completed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), error: null, skipped_reason: null });
    // The analysis's tokens are its own; the conversation's are unchanged by it.
    expect(call).toMatchObject({ analysis_prompt_tokens: 400, analysis_completion_tokens: 60, llm_prompt_tokens: 50, llm_completion_tokens: 12 });
    expect(call.status).toBe('completed');
    expect(call.end_time).toBe(ended.end_time);

    // The request: JSON-schema mode, strict, with the call's transcript and day.
    expect(llm.structuredRequests).toHaveLength(1);
    const request = llm.structuredRequests[0]!.body;
    expect(request.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'call_analysis', strict: true } });
    expect(request.response_format.json_schema.schema.properties.fields.properties.service.enum).toEqual(['checkup', 'cleaning', null]);
    expect(request.messages[0].content).toContain('One sentence: what the caller wanted and what was agreed.');
    expect(request.messages[0].content).toContain('The caller ends the call with an appointment booked.');
    expect(request.messages[0].content).toContain(`The call took place on ${call.created_at.slice(0, 10)}`);
    expect(request.messages[1].content).toContain('Caller: I would like a checkup on the third of December.');
    expect(request.messages[1].content).toContain('Agent: Hello, dental clinic.');

    // The event comes after call_ended and carries the whole analysis.
    const trace = await events(callId);
    expect(trace.map((e) => e.id)).toEqual(trace.map((_, i) => i + 1));
    expect(trace.at(-1)).toMatchObject({ event_type: 'analysis_completed', data: { analysis_status: 'done', analysis: call.analysis, rerun: false } });
    expect(trace.filter((e) => e.event_type === 'call_ended')).toHaveLength(1);

    // The webhook: Standard Webhooks signed, the analysis in its data, delivered once.
    const delivery = await hooks.waitForRequest((r) => (r.body as any)?.type === 'analysis_completed', 20_000);
    expect(() => new Webhook(agent.webhook_secret).verify(delivery.raw, delivery.headers as Record<string, string>)).not.toThrow();
    expect(delivery.body).toMatchObject({ call_id: callId, agent_name: 'dental-booking', data: { analysis_status: 'done', analysis: { fields: { booked: true, date: '2026-12-03' }, success: true } } });
    expect(delivery.headers['webhook-id']).toBe(`msg_${callId.replace(/-/g, '')}_${trace.at(-1)!.id}`);
    await new Promise((r) => setTimeout(r, 1000));
    expect(analysisHooks(callId)).toHaveLength(1);

    // Operators find the verdict in the Temporal UI.
    const description = await h.temporal.workflow.getHandle(callWorkflowId(callId)).describe();
    const attrs = Object.fromEntries(description.typedSearchAttributes.getAll().map((p) => [p.key.name, p.value]));
    expect(attrs).toMatchObject({ CallSuccess: true, CallStatus: 'completed' });
  }, 60_000);

  it('retries LLM errors with backoff and asks again for answers that fail the schema, then records the error', async () => {
    await createAgent('dental-retry');
    llm.setResponder(() => ({ content: 'Sure.' }));
    // Two server errors (retried by Temporal), then an answer with a bad date (asked again), then a good one.
    llm.failStructuredNext(2, 503);
    llm.enqueueStructured({ object: { ...GOOD_ANSWER, fields: { ...GOOD_ANSWER.fields, date: 'next Thursday' } } }, { object: GOOD_ANSWER });
    const first = await textCall('dental-retry', ['Book me in please.']);
    const done = await analysed(first.callId);
    expect(done.analysis_status).toBe('done');
    expect(done.analysis.fields).toEqual(GOOD_ANSWER.fields);
    expect(llm.structuredRequests).toHaveLength(4);
    // The second answer was asked for with the reason the first was refused.
    expect(llm.structuredRequests[3]!.body.messages[1].content).toContain('fields.date: must be a date YYYY-MM-DD, got "next Thursday"');

    // Three refused answers (ANALYSIS_ANSWER_ATTEMPTS): recorded as failed, with the reason, no verdict.
    llm.reset();
    llm.setResponder(() => ({ content: 'Sure.' }));
    llm.enqueueStructured(
      { object: { ...GOOD_ANSWER, fields: { booked: 'yes' } }, usage: { prompt_tokens: 100, completion_tokens: 10 } },
      { raw: '{"summary": "cut off', usage: { prompt_tokens: 100, completion_tokens: 10 } },
      { object: { ...GOOD_ANSWER, fields: { ...GOOD_ANSWER.fields, service: 'surgery' } }, usage: { prompt_tokens: 100, completion_tokens: 10 } },
    );
    const second = await textCall('dental-retry', ['Book me in please.']);
    const failed = await analysed(second.callId);
    expect(failed.analysis_status).toBe('failed');
    expect(failed.analysis).toMatchObject({ summary: null, fields: {}, success: null, model: 'gpt-4o-mini', skipped_reason: null });
    expect(failed.analysis.error).toBe('the answer did not match the schema after 3 tries: fields.service: must be one of checkup, cleaning, got "surgery"');
    expect(failed).toMatchObject({ status: 'completed', analysis_prompt_tokens: 300, analysis_completion_tokens: 30 });
    expect((await events(second.callId)).at(-1)).toMatchObject({ event_type: 'analysis_completed', data: { analysis_status: 'failed' } });
  }, 60_000);

  it('skips a call in which the caller never spoke, without asking the LLM', async () => {
    await createAgent('dental-silent');
    const { callId } = await textCall('dental-silent', []);
    const call = await analysed(callId);
    expect(call.analysis_status).toBe('skipped');
    expect(call.analysis).toMatchObject({ summary: null, success: null, error: null, skipped_reason: 'the caller did not speak' });
    expect(llm.structuredRequests).toHaveLength(0);
    expect(call.analysis_prompt_tokens).toBe(0);
  }, 30_000);

  it('asks a provider without JSON-schema mode (Groq) through a forced tool call', async () => {
    await createAgent('dental-groq', { analysis: { ...BOOKING_ANALYSIS, llm_provider: 'groq' } });
    llm.setResponder(() => ({ content: 'Booked.' }));
    llm.enqueueStructured({ object: GOOD_ANSWER });
    const { callId } = await textCall('dental-groq', ['A checkup on the third please.']);
    const call = await analysed(callId);
    expect(call.analysis).toMatchObject({ ...GOOD_ANSWER, model: 'llama-3.1-8b-instant' });
    const request = llm.structuredRequests[0]!;
    expect(request.headers.authorization).toBe('Bearer gsk-test');
    expect(request.body.response_format).toBeUndefined();
    expect(request.body.tool_choice).toEqual({ type: 'function', function: { name: 'call_analysis' } });
    expect(request.body.tools[0].function.parameters.properties.fields.required).toEqual(['booked', 'date', 'service']);
  }, 30_000);

  it('answers POST /api/calls/end with the final record at once, while the analysis is still running', async () => {
    await createAgent('dental-slow');
    llm.setResponder(() => ({ content: 'Sure.' }));
    llm.enqueueStructured({ object: GOOD_ANSWER, delay_ms: 4000 });
    const started = Date.now();
    const { callId, ended } = await textCall('dental-slow', ['Hello there.']);
    expect(Date.now() - started).toBeLessThan(4000);
    expect(ended).toMatchObject({ status: 'completed', analysis_status: 'pending', analysis: null });
    expect(ended.end_time).not.toBeNull();
    // Meanwhile a re-run is refused: the call's own analysis writes first.
    const early = await h.request('POST', `/api/calls/${callId}/analyze`);
    expect(early.status).toBe(409);
    expect(early.body.detail).toContain('still running');
    expect((await analysed(callId)).analysis_status).toBe('done');
  }, 30_000);
});

describe('re-running an analysis', () => {
  it("replaces the result with the agent's current settings and announces it again", async () => {
    const agent = await createAgent('dental-rerun', { webhook_url: `${hooks.url}/events`, webhook_events: ['analysis_completed'] });
    llm.setResponder(() => ({ content: 'See you then.' }));
    llm.enqueueStructured({ object: { ...GOOD_ANSWER, success: false, success_reason: 'Not confirmed.' }, usage: { prompt_tokens: 200, completion_tokens: 20 } });
    const { callId } = await textCall('dental-rerun', ['Maybe a cleaning next week.']);
    expect((await analysed(callId)).analysis.success).toBe(false);
    await hooks.waitForRequest((r) => (r.body as any)?.type === 'analysis_completed', 20_000);

    // A new field, then the re-run.
    const patched = await h.request('PATCH', `/api/agents/${agent.id}`, {
      body: { analysis: { fields: { ...BOOKING_ANALYSIS.fields, urgent: { type: 'boolean', description: 'the caller is in pain' } } } },
    });
    expect(patched.status).toBe(200);
    expect(Object.keys(patched.body.analysis.fields)).toEqual(['booked', 'date', 'service', 'urgent']);
    expect(patched.body.analysis.success_criteria).toBe(BOOKING_ANALYSIS.success_criteria);
    llm.enqueueStructured({ object: { ...GOOD_ANSWER, fields: { ...GOOD_ANSWER.fields, urgent: false } }, usage: { prompt_tokens: 300, completion_tokens: 30 } });
    const rerun = await h.request('POST', `/api/calls/${callId}/analyze`);
    expect(rerun.status).toBe(202);
    expect(rerun.body).toEqual({ call_id: callId, analysis_status: 'pending', workflow_id: `analysis-${callId}` });
    await h.temporal.workflow.getHandle(`analysis-${callId}`).result();

    const call = await analysed(callId);
    expect(call.analysis).toMatchObject({ success: true, fields: { booked: true, date: '2026-12-03', service: 'checkup', urgent: false } });
    expect(call).toMatchObject({ analysis_prompt_tokens: 500, analysis_completion_tokens: 50 });
    const reported = (await events(callId)).filter((e) => e.event_type === 'analysis_completed');
    expect(reported.map((e) => e.data.rerun)).toEqual([false, true]);
    expect(reported[1]!.data.analysis).toEqual(call.analysis);

    // A second webhook, with the new event's own message id.
    const second = await eventually(async () => (analysisHooks(callId).length >= 2 ? analysisHooks(callId)[1] : null), 20_000);
    const ids = analysisHooks(callId).map((r: ReceivedRequest) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(2);
    expect(second!.headers['webhook-id']).toBe(`msg_${callId.replace(/-/g, '')}_${reported[1]!.id}`);
    expect(() => new Webhook(agent.webhook_secret).verify(second!.raw, second!.headers as Record<string, string>)).not.toThrow();
    expect((second!.body as any).data.analysis.fields.urgent).toBe(false);
  }, 60_000);

  it('joins a re-run already under way instead of starting a second one', async () => {
    await createAgent('dental-join');
    llm.setResponder(() => ({ content: 'Fine.' }));
    llm.enqueueStructured({ object: GOOD_ANSWER });
    const { callId } = await textCall('dental-join', ['Hi.']);
    await analysed(callId);
    llm.enqueueStructured({ object: GOOD_ANSWER, delay_ms: 1500 });
    const [a, b] = await Promise.all([h.request('POST', `/api/calls/${callId}/analyze`), h.request('POST', `/api/calls/${callId}/analyze`)]);
    expect([a.status, b.status]).toEqual([202, 202]);
    await h.temporal.workflow.getHandle(`analysis-${callId}`).result();
    expect(llm.structuredRequests).toHaveLength(2); // the call's own analysis and one re-run
    expect((await events(callId)).filter((e) => e.event_type === 'analysis_completed')).toHaveLength(2);
  }, 30_000);

  it('is refused for unknown calls, agents without analysis and deleted agents', async () => {
    expect((await h.request('POST', '/api/calls/00000000-0000-4000-8000-000000000000/analyze')).status).toBe(404);
    const plain = await h.request('POST', '/api/agents', { body: { name: 'dental-plain', prompt: 'Be brief.' } });
    expect(plain.body.analysis).toBeNull();
    llm.setResponder(() => ({ content: 'Fine.' }));
    const { callId } = await textCall('dental-plain', ['Hi.']);
    expect((await getCall(callId)).analysis_status).toBeNull();
    const refused = await h.request('POST', `/api/calls/${callId}/analyze`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toBe('Agent dental-plain has no post-call analysis: set its "analysis" first');
    expect((await h.request('DELETE', `/api/agents/${plain.body.id}`)).status).toBe(204);
    expect((await h.request('POST', `/api/calls/${callId}/analyze`)).body.detail).toContain('has been deleted');
  }, 30_000);
});

describe('agent setting validation', () => {
  it.each([
    [{ fields: { mood: { type: 'enum', description: 'x' } } }, 'analysis.fields.mood.enum: an enum field needs its values'],
    [{ fields: { booked: { type: 'boolean', enum: ['a'] } } }, 'analysis.fields.booked.enum: only an enum field has values'],
    [{ fields: { 'bad name': { type: 'string' } } }, 'analysis.fields'],
    [{ fields: { booked: { type: 'boolean' } }, required: ['date'] }, 'analysis.required.0: "date" is not one of the fields'],
    [{ fields: { when: { type: 'datetime' } } }, 'analysis.fields.when.type'],
    [{ llm_provider: 'anthropic' }, 'analysis.llm_provider'],
    [{ summary: 'x' }, 'unknown field(s): summary'],
  ])('refuses %j with 422', async (analysis, detail) => {
    const res = await h.request('POST', '/api/agents', { body: { name: `bad-${Math.random().toString(36).slice(2, 8)}`, prompt: 'x', analysis } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain(detail);
  });

  it('travels in agent bundles: exported, and imported elsewhere as it was', async () => {
    const agent = await createAgent('dental-bundle', { analysis: { ...BOOKING_ANALYSIS, llm_model: 'gpt-4o' } });
    const bundle = (await h.request('GET', `/api/agents/${agent.id}/export`)).body;
    expect(bundle.agent.analysis).toMatchObject({ ...BOOKING_ANALYSIS, llm_model: 'gpt-4o' });
    const imported = await h.request('POST', '/api/agents/import', { body: { ...bundle, agent: { ...bundle.agent, name: 'dental-bundle-copy' } } });
    expect(imported.status).toBe(201);
    const copy = (await h.request('GET', `/api/agents/${imported.body.agent.id}`)).body;
    expect(copy.analysis).toEqual({ ...agent.analysis, llm_model: 'gpt-4o' });
    expect(Object.keys(copy.analysis.fields)).toEqual(['booked', 'date', 'service']);
  });

  it('is merged key by key on PATCH, null restoring a default, and null removing the analysis', async () => {
    const agent = await createAgent('dental-patch');
    const cleared = await h.request('PATCH', `/api/agents/${agent.id}`, { body: { analysis: { success_criteria: null, enabled: false } } });
    expect(cleared.body.analysis).toMatchObject({ enabled: false, success_criteria: null, required: ['booked'] });
    const removed = await h.request('PATCH', `/api/agents/${agent.id}`, { body: { analysis: null } });
    expect(removed.body.analysis).toBeNull();
  });
});

describe('listing calls by analysis outcome', () => {
  it('filters on success and on field values, with the other filters, and refuses malformed ones', async () => {
    await createAgent('dental-list');
    llm.setResponder(() => ({ content: 'Okay.' }));
    const outcomes = [
      { ...GOOD_ANSWER, fields: { booked: true, date: '2026-12-03', service: 'checkup' } },
      { ...GOOD_ANSWER, fields: { booked: true, date: '2026-12-04', service: 'cleaning' } },
      { ...GOOD_ANSWER, fields: { booked: false, date: null, service: null }, success: false, success_reason: 'Nothing booked.' },
    ];
    const ids: string[] = [];
    for (const object of outcomes) {
      llm.enqueueStructured({ object });
      const { callId } = await textCall('dental-list', ['About an appointment.']);
      await analysed(callId);
      ids.push(callId);
    }
    const list = async (query: string) => {
      const res = await h.request('GET', `/api/calls?agent_name=dental-list&include_transcript=false&${query}`);
      expect(res.status).toBe(200);
      return { ids: (res.body.calls as Array<{ id: string }>).map((c) => c.id).sort(), total: res.body.total as number };
    };
    const sorted = (...i: number[]) => i.map((n) => ids[n]!).sort();
    expect(await list('success=true')).toEqual({ ids: sorted(0, 1), total: 2 });
    expect(await list('success=false')).toEqual({ ids: sorted(2), total: 1 });
    expect(await list('field.booked=true')).toEqual({ ids: sorted(0, 1), total: 2 });
    expect(await list('field.booked=false')).toEqual({ ids: sorted(2), total: 1 });
    expect(await list('field.date=2026-12-03')).toEqual({ ids: sorted(0), total: 1 });
    expect(await list('field.service=cleaning&success=true')).toEqual({ ids: sorted(1), total: 1 });
    expect(await list('field.service=cleaning&field.booked=false')).toEqual({ ids: [], total: 0 });
    expect(await list('field.nosuch=1')).toEqual({ ids: [], total: 0 });
    const listed = (await h.request('GET', `/api/calls?agent_name=dental-list&success=true&page_size=1`)).body;
    expect(listed.total).toBe(2);
    expect(listed.calls[0]).toMatchObject({ id: ids[1], analysis_status: 'done', analysis: { success: true } });

    const bad = await h.request('GET', '/api/calls?success=yes');
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toContain('query.success');
    const badName = await h.request('GET', '/api/calls?field.bad-name=1');
    expect(badName.status).toBe(422);
    expect(badName.body.detail).toContain('query.field.bad-name: field names are letters, digits and _');
    const twice = await h.request('GET', '/api/calls?field.booked=true&field.booked=false');
    expect(twice.status).toBe(422);
  }, 90_000);
});
