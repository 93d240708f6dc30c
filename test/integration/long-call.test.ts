/**
 * A long call continues as new when Temporal suggests it (the test server suggests it early, at
 * 400 history events) and carries on with its state: node, totals, event numbering, transcript.
 */
import { callWorkflowId } from '../../workflows/call-definitions';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { createAgent } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';

let h: Harness;
let llm: FakeOpenAI;

beforeAll(async () => {
  llm = await startFakeOpenAI();
  h = await startHarness({ env: { OPENAI_BASE_URL: llm.url }, worker: true });
});
afterAll(async () => {
  await h?.stop();
  await llm?.stop();
});

it('continues as new during a long call without losing state or events', async () => {
  await createAgent(h.db, h.box, { name: 'long-agent', greeting: 'Hi.' });
  llm.setResponder((body) => ({ content: `echo ${body.messages[body.messages.length - 1].content}`, usage: { prompt_tokens: 10, completion_tokens: 2 } }));
  const start = await h.request('POST', '/api/calls/test', { body: { agent_name: 'long-agent' } });
  const callId = start.body.call_id as string;
  const turns = 70;
  for (let i = 1; i <= turns; i++) {
    const res = await h.request('POST', `/api/calls/${callId}/test/messages`, { body: { text: `message ${i}` } });
    expect(res.body.replies).toEqual([`echo message ${i}`]);
  }
  const ended = await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
  expect(ended.body).toMatchObject({ status: 'completed', llm_prompt_tokens: turns * 10, llm_completion_tokens: turns * 2 });
  expect(ended.body.transcript).toHaveLength(1 + 2 * turns);

  // More than one run: the first one continued as new.
  const history = await h.temporal.workflow.getHandle(callWorkflowId(callId)).fetchHistory();
  const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
  expect(started.continuedExecutionRunId).toBeTruthy();
  expect(started.input).toBeDefined();

  const events = (await h.request('GET', `/api/calls/${callId}/events`)).body as Array<{ id: number; event_type: string }>;
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  expect(events.filter((e) => e.event_type === 'user_spoke')).toHaveLength(turns);
  expect(events.filter((e) => e.event_type === 'call_started')).toHaveLength(1);
  expect(events.filter((e) => e.event_type === 'call_ended')).toHaveLength(1);
  // After continuing, the LLM still sees recent conversation history.
  const lastRequest = llm.requests[llm.requests.length - 1]!.body;
  expect(lastRequest.messages.some((m: any) => m.content === `message ${turns - 1}`)).toBe(true);
}, 120_000);
