/**
 * The knowledge-base scenarios of `npm run record:histories` (docs/knowledge-base.md): a
 * document's ingestion workflow, and text calls answering from the base in `auto` mode (the
 * passages retrieved inside the LLM activity, the event recorded from its result) and in `tool`
 * mode (the search_knowledge_base tool's searchKnowledge activity).
 */
import fs from 'node:fs';
import path from 'node:path';
import { callWorkflowId } from '../../workflows/call-definitions';
import { knowledgeWorkflowId } from '../../workflows/knowledge-definitions';
import type { Recorder } from './record-text-histories';

const FAQ = path.join(__dirname, '..', '..', 'test', 'fixtures', 'knowledge', 'clinic-faq.md');

/** Returns the knowledge base it made, for the web call that answers from it. */
export async function recordKnowledgeHistories({ h, llm, save, post }: Recorder): Promise<string> {
  const base = await post('/api/knowledge-bases', { name: 'replay-kb', language: 'en' });
  const doc = await post(`/api/knowledge-bases/${base.id}/documents`, { name: 'clinic-faq.md', content_base64: fs.readFileSync(FAQ).toString('base64') });
  const ingested = await h.temporal.workflow.getHandle(knowledgeWorkflowId(doc.id)).result();
  if (ingested.status !== 'ready') throw new Error(`ingestion ended ${JSON.stringify(ingested)}`);
  await save('knowledge-ingest', knowledgeWorkflowId(doc.id));

  for (const mode of ['auto', 'tool'] as const) {
    await post('/api/agents', { name: `replay-kb-${mode}`, prompt: 'Answer for Sunrise Clinic.', greeting: 'Hello.', knowledge_base_ids: [base.id], knowledge_mode: mode });
    llm.setResponder((b) =>
      mode === 'tool' && b.messages[b.messages.length - 1].role === 'user'
        ? { tool_calls: [{ name: 'search_knowledge_base', arguments: { query: 'blood test price' } }] }
        : { content: 'A blood test costs 25 euros.' },
    );
    const call = await post('/api/calls/test', { agent_name: `replay-kb-${mode}` });
    await post(`/api/calls/${call.call_id}/test/messages`, { text: 'How much does a blood test cost?' });
    await post('/api/calls/end', { call_id: call.call_id });
    await save(`knowledge-${mode}-call`, callWorkflowId(call.call_id));
  }
  llm.reset();
  return base.id;
}
