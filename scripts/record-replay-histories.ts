/**
 * Records workflow histories of representative calls into test/replay/histories/, for the replay
 * test that runs them against the current workflow code (a change that would break running calls
 * fails CI). Re-record deliberately, e.g. after a versioned (patched) workflow change:
 *
 *   npm run record:histories
 *
 * Starts the same real stack as the tests (PostgreSQL, Temporal dev server, API, worker) with a
 * fake LLM and a local webhook receiver.
 */
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { callWorkflowId } from '../workflows/call-definitions';
import { startFakeOpenAI } from '../test/fakes/openai-server';
import { startWebhookReceiver } from '../test/fakes/webhook-receiver';
import { createAgent, createNodes, createTool } from '../test/support/fixtures';
import globalSetup from '../test/support/global-setup';
import globalTeardown from '../test/support/global-teardown';
import { startHarness } from '../test/support/harness';

const OUT = path.join(__dirname, '..', 'test', 'replay', 'histories');

async function main(): Promise<void> {
  await globalSetup();
  const llm = await startFakeOpenAI();
  const hooks = await startWebhookReceiver();
  const h = await startHarness({ env: { OPENAI_BASE_URL: llm.url, WEBHOOK_RETRY_INITIAL_SECS: '1' }, worker: true });
  const save = async (name: string, workflowId: string) => {
    // Binary protobuf: the SDK's JSON reader trips over duplicate protobufjs copies in node_modules.
    const history = await h.temporal.workflow.getHandle(workflowId).fetchHistory();
    fs.writeFileSync(path.join(OUT, `${name}.binpb`), temporal.api.history.v1.History.encode(history).finish());
    console.log(`recorded ${name} (${history.events?.length} events)`);
  };
  const post = async (p: string, body: unknown) => {
    const res = await h.request('POST', p, { body });
    if (res.status >= 300) throw new Error(`${p}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  try {
    fs.mkdirSync(OUT, { recursive: true });
    const last = (b: any) => b.messages[b.messages.length - 1];

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
  } finally {
    await h.stop();
    await llm.stop();
    await hooks.stop();
    await globalTeardown();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
