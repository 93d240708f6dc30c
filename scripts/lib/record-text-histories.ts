/**
 * The text-call scenarios of `npm run record:histories` (scripts/record-replay-histories.ts):
 * post-call analysis and its re-run, a freeform call with a webhook tool and a retried webhook
 * delivery, a flow to its terminal node, an idle timeout, an agent test run, a call using an MCP tool,
 * and the knowledge-base scenarios (record-knowledge-histories.ts).
 */
import { startFakeMcpServer } from '../../test/fakes/mcp-server';
import { recordKnowledgeHistories } from './record-knowledge-histories';
import type { FakeOpenAI } from '../../test/fakes/openai-server';
import type { WebhookReceiver } from '../../test/fakes/webhook-receiver';
import { createAgent, createNodes, createTool } from '../../test/support/fixtures';
import type { Harness } from '../../test/support/harness';
import { callWorkflowId } from '../../workflows/call-definitions';
import { attemptWorkflowId, testRunWorkflowId } from '../../workflows/test-definitions';

export interface Recorder {
  h: Harness;
  llm: FakeOpenAI;
  hooks: WebhookReceiver;
  save(name: string, workflowId: string): Promise<void>;
  post(path: string, body: unknown): Promise<any>;
}

/** Records the text scenarios; returns the webhook tool the phone calls use too (none with onlyAnalysis). */
export async function recordTextHistories({ h, llm, hooks, save, post }: Recorder, onlyAnalysis: boolean): Promise<{ id: string } | undefined> {
  const last = (b: any) => b.messages[b.messages.length - 1];

  // 0. Post-call analysis: a text call analysed after its end (an LLM error retried, an answer
  //    refused and asked again), its analysis_completed webhook, then a re-run of the analysis.
  await createAgent(h.db, h.box, {
    name: 'replay-analysis',
    greeting: 'Hello, the clinic.',
    webhook_url: `${hooks.url}/analysis`,
    webhook_events: ['analysis_completed'],
    analysis: {
      enabled: null,
      summary_prompt: null,
      fields: { booked: { type: 'boolean', description: 'an appointment was booked' }, date: { type: 'date', description: 'its day' } },
      required: ['booked'],
      success_criteria: 'An appointment was booked.',
      llm_provider: null,
      llm_model: null,
    },
  });
  llm.setResponder(() => ({ content: 'You are booked for the third. Goodbye!' }));
  const booked = { summary: 'Booked for the third.', fields: { booked: true, date: '2026-12-03' }, success: true, success_reason: 'Booked.' };
  llm.failStructuredNext(1);
  llm.enqueueStructured({ object: { ...booked, fields: { booked: true, date: 'the third' } } }, { object: booked });
  const analysed = await post('/api/calls/test', { agent_name: 'replay-analysis' });
  await post(`/api/calls/${analysed.call_id}/test/messages`, { text: 'Book me on December the third.' });
  await post('/api/calls/end', { call_id: analysed.call_id });
  await h.temporal.workflow.getHandle(callWorkflowId(analysed.call_id)).result();
  await save('post-call-analysis', callWorkflowId(analysed.call_id));
  llm.enqueueStructured({ object: booked });
  await post(`/api/calls/${analysed.call_id}/analyze`, {});
  await h.temporal.workflow.getHandle(`analysis-${analysed.call_id}`).result();
  await save('analysis-rerun', `analysis-${analysed.call_id}`);
  llm.reset();
  if (onlyAnalysis) return undefined;

  // 1. Freeform: greeting, webhook tool, signed call_ended webhook (with one failed delivery).
  const tool = await createTool(h.db, h.box, { name: 'get_balance', webhook_url: `${hooks.url}/balance` });
  await createAgent(h.db, h.box, {
    name: 'replay-freeform',
    greeting: 'Hello {{name}}',
    tool_ids: [tool.id],
    webhook_url: `${hooks.url}/events`,
    webhook_events: ['call_ended'],
  });
  hooks.respond({ status: 500 }, { path: '/events' });
  llm.setResponder((b) =>
    last(b).role === 'user' ? { tool_calls: [{ name: 'get_balance', arguments: { kind: 'savings' } }] } : { content: 'You have 42.' },
  );
  const freeform = await post('/api/calls/test', { agent_name: 'replay-freeform', custom_parameters: { name: 'Asha' } });
  await post(`/api/calls/${freeform.call_id}/test/messages`, { text: 'balance please' });
  await post('/api/calls/end', { call_id: freeform.call_id });
  await save('freeform-tool-call', callWorkflowId(freeform.call_id));
  await hooks.waitForRequest((r) => r.path === '/events' && (r.body as any)?.type === 'call_ended', 30_000);
  const events = (await h.request('GET', `/api/calls/${freeform.call_id}/events`)).body as Array<{ id: number; event_type: string }>;
  const endedSeq = events.find((e) => e.event_type === 'call_ended')!.id;
  const webhookWorkflowId = `webhook-${freeform.call_id}-${endedSeq}`;
  await h.temporal.workflow.getHandle(webhookWorkflowId).result();
  await save('webhook-delivery-retried', webhookWorkflowId);

  // 2. Flow agent across nodes to end_call.
  const agent = await createAgent(h.db, h.box, { name: 'replay-flow', greeting: 'Welcome.' });
  await createNodes(h.db, agent.id, [
    { node_key: 'ask', is_initial: true, functions: [{ name: 'save_name', description: 'save', next_node_key: 'done', properties: { who: { type: 'string' } }, required: ['who'] }] },
    { node_key: 'done', is_terminal: true, builtin_tools: ['end_call'], pre_actions: [{ type: 'say', text: 'Thanks {{who}}.' }] },
  ]);
  llm.setResponder((b) => {
    const names = (b.tools ?? []).map((t: any) => t.function.name);
    if (names.includes('save_name')) return { tool_calls: [{ name: 'save_name', arguments: { who: 'Meera' } }] };
    return { content: 'Bye!', tool_calls: [{ name: 'end_call', arguments: {} }] };
  });
  const flow = await post('/api/calls/test', { agent_name: 'replay-flow' });
  await post(`/api/calls/${flow.call_id}/test/messages`, { text: 'I am Meera' });
  await h.temporal.workflow.getHandle(callWorkflowId(flow.call_id)).result();
  await save('flow-to-terminal', callWorkflowId(flow.call_id));

  // 3. Idle warning then idle timeout.
  await createAgent(h.db, h.box, {
    name: 'replay-idle',
    pipeline_settings: { idle_warn_secs: 1, idle_end_secs: 2, vad_confidence: 0.5, vad_start_secs: 0.2, vad_stop_secs: 0.2, vad_min_volume: 0.4, min_words: 3 },
  });
  llm.setResponder(() => ({ content: 'Are you there?' }));
  const idle = await post('/api/calls/test', { agent_name: 'replay-idle' });
  await h.temporal.workflow.getHandle(callWorkflowId(idle.call_id)).result();
  await save('idle-timeout', callWorkflowId(idle.call_id));

  // 4. An agent test run (docs/agent-tests.md): one scripted attempt whose call answers its tool
  //    from the test's mocks; the run, the attempt and the test call are each recorded.
  const tested = await createAgent(h.db, h.box, { name: 'replay-tested', greeting: 'Hi.', tool_ids: [tool.id] });
  llm.setResponder((b) =>
    last(b).role === 'user' ? { tool_calls: [{ name: 'get_balance', arguments: { kind: 'savings' } }] } : { content: 'You have 42.' },
  );
  const test = await post(`/api/agents/${tested.id}/tests`, {
    name: 'balance',
    kind: 'scripted',
    script: ['balance please'],
    tool_mocks: { get_balance: [{ balance: 42 }] },
    expectations: [{ type: 'tool_called', tool: 'get_balance' }],
  });
  const run = await post(`/api/agents/${tested.id}/test-runs`, {});
  await h.temporal.workflow.getHandle(testRunWorkflowId(run.id)).result();
  await save('agent-test-run', testRunWorkflowId(run.id));
  await save('agent-test-attempt', attemptWorkflowId(run.id, test.id, 1));
  const attempt = (await h.request('GET', `/api/test-runs/${run.id}`)).body.tests[0].attempts[0];
  await save('agent-test-call', callWorkflowId(attempt.call_id));
  await recordMcpToolCall({ h, llm, hooks, save, post });
  await recordKnowledgeHistories({ h, llm, hooks, save, post });
  return tool;
}

/**
 * 5. A text call whose LLM calls an MCP tool (docs/tools.md, MCP servers): the server's tool list
 *    stored by refresh, the durable callMcpTool activity, the result back to the LLM.
 */
export async function recordMcpToolCall({ llm, save, post }: Recorder): Promise<void> {
  const crm = await startFakeMcpServer();
  try {
    const server = await post('/api/mcp-servers', { name: 'replay_crm', url: crm.url });
    await post(`/api/mcp-servers/${server.id}/refresh`, {});
    await post('/api/agents', { name: 'replay-mcp', prompt: 'Look customers up.', greeting: 'Hello.', mcp_tools: ['replay_crm/lookup_customer'] });
    llm.setResponder((b) =>
      b.messages[b.messages.length - 1].role === 'user' ? { tool_calls: [{ name: 'replay_crm__lookup_customer', arguments: { customer_id: 'C-42' } }] } : { content: 'You are on gold.' },
    );
    const call = await post('/api/calls/test', { agent_name: 'replay-mcp' });
    await post(`/api/calls/${call.call_id}/test/messages`, { text: 'What plan am I on?' });
    await post('/api/calls/end', { call_id: call.call_id });
    await save('mcp-tool-call', callWorkflowId(call.call_id));
  } finally {
    await crm.stop();
  }
}
