/**
 * Traceability of knowledge-base answers (docs/knowledge-base.md#traceability), end to end over
 * the real API, Temporal worker and PostgreSQL with the fake LLM: the call's transcript names the
 * passages each agent reply was given (`sources`, `auto` and `tool` mode) and no sources on a
 * reply given none; an agent test's `used_document` expectation passes when a reply was answered
 * from the document and fails, saying which documents were used, when it was not.
 */
import fs from 'node:fs';
import path from 'node:path';
import { waitForRun } from '../support/booking-agent';
import { eventually } from '../support/fixtures';
import { events, h, hangUp, llm, say, startText, useTextCallStack } from '../support/text-call-stack';

useTextCallStack();

const FAQ = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'knowledge', 'clinic-faq.md')).toString('base64');
const SHIPPING = Buffer.from('# Shipping\n\n## Couriers\n\nParcels travel with BlueDart; the tracking number arrives by SMS.\n').toString('base64');

let baseId: string;

beforeAll(async () => {
  const base = await h.request('POST', '/api/knowledge-bases', { body: { name: 'trace-kb' } });
  expect(base.status).toBe(201);
  baseId = base.body.id;
  for (const [name, content_base64] of [['clinic-faq.md', FAQ], ['shipping.md', SHIPPING]]) {
    const doc = await h.request('POST', `/api/knowledge-bases/${baseId}/documents`, { body: { name, content_base64 } });
    expect(doc.status).toBe(202);
    const ready = await eventually(async () => {
      const res = await h.request('GET', `/api/knowledge-bases/${baseId}/documents/${doc.body.id}`);
      return res.body.status !== 'processing' && res.body;
    }, 20_000);
    expect(ready.status).toBe('ready');
  }
});

async function agentWith(name: string, mode: 'auto' | 'tool') {
  const res = await h.request('POST', '/api/agents', {
    body: { name, prompt: 'You answer questions for Sunrise Clinic.', knowledge_base_ids: [baseId], knowledge_mode: mode, knowledge_timeout_ms: 2000 },
  });
  expect(res.status).toBe(201);
  return res.body as { id: string };
}

async function transcript(callId: string) {
  const res = await h.request('GET', `/api/calls/${callId}`);
  expect(res.status).toBe(200);
  return res.body.transcript as Array<{ role: string; text: string; sources?: Array<Record<string, unknown>> }>;
}

it('auto: the reply answered from passages names them as sources; a reply given none has no sources', async () => {
  await agentWith('trace-auto', 'auto');
  llm.setResponder((body) => ({ content: String(body.messages.at(-1).content).includes('blood') ? 'It costs 25 euros.' : 'I do not know that.' }));
  const call = await startText('trace-auto');
  await say(call.call_id, 'How much does a blood test cost?');
  await say(call.call_id, 'zebra xylophone quantum nebula');
  await hangUp(call.call_id);

  const lines = await transcript(call.call_id);
  expect(lines.map((l) => [l.role, l.text])).toEqual([
    ['user', 'How much does a blood test cost?'],
    ['assistant', 'It costs 25 euros.'],
    ['user', 'zebra xylophone quantum nebula'],
    ['assistant', 'I do not know that.'],
  ]);
  const sources = lines[1]!.sources!;
  expect(sources[0]).toEqual({ chunk_id: expect.any(String), knowledge_base_id: baseId, document: 'clinic-faq.md', heading: 'Sunrise Clinic FAQ > Prices', score: expect.any(Number) });
  // They are the chunks of the turn's knowledge_retrieved event, in its order (what the LLM was given).
  const retrieved = (await events(call.call_id)).filter((e) => e.event_type === 'knowledge_retrieved');
  expect(retrieved).toHaveLength(2);
  expect(sources).toEqual(retrieved[0]!.data.chunks);
  expect(retrieved[1]!.data.chunks).toEqual([]);
  for (const line of [lines[0], lines[2], lines[3]]) expect(line).not.toHaveProperty('sources');
  // The list answers the same transcript.
  const listed = await h.request('GET', '/api/calls?agent_name=trace-auto');
  expect(listed.body.calls[0].transcript).toEqual(lines);
});

it('tool: the reply after search_knowledge_base has its passages; what the agent said before searching has none', async () => {
  await agentWith('trace-tool', 'tool');
  llm.enqueue({ content: 'Let me check.', tool_calls: [{ name: 'search_knowledge_base', arguments: { query: 'parking garage' } }] }, { content: 'Two hours are free.' });
  const call = await startText('trace-tool');
  expect((await say(call.call_id, 'Where can I park?')).replies).toEqual(['Let me check.', 'Two hours are free.']);
  llm.setResponder(() => ({ content: 'Goodbye.' }));
  await say(call.call_id, 'Thanks');
  await hangUp(call.call_id);

  const lines = await transcript(call.call_id);
  expect(lines.map((l) => [l.text, l.sources?.[0]?.heading ?? null])).toEqual([
    ['Where can I park?', null],
    ['Let me check.', null],
    ['Two hours are free.', 'Sunrise Clinic FAQ > Parking'],
    ['Thanks', null],
    ['Goodbye.', null],
  ]);
  expect(lines[2]!.sources![0]).toMatchObject({ document: 'clinic-faq.md', knowledge_base_id: baseId });
});

describe('an agent test expecting an answer from a document', () => {
  let agentId: string;
  beforeAll(async () => {
    agentId = (await agentWith('trace-tests', 'auto')).id;
  });

  async function createTest(name: string, script: string[], document: string) {
    const res = await h.request('POST', `/api/agents/${agentId}/tests`, { body: { name, kind: 'scripted', script, expectations: [{ type: 'used_document', document }] } });
    expect(res.status).toBe(201);
    expect(res.body.expectations).toEqual([{ type: 'used_document', document }]);
    return res.body.id as string;
  }

  it('passes when a reply was given a passage of the document and fails, saying what was used, when none was', async () => {
    llm.setResponder(() => ({ content: 'It costs 25 euros.' }));
    const used = await createTest('uses the faq', ['How much does a blood test cost?'], 'Clinic-FAQ.md');
    const other = await createTest('uses shipping', ['How much does a blood test cost?'], 'shipping.md');
    const none = await createTest('nothing retrieved', ['zebra xylophone quantum nebula'], 'clinic-faq.md');
    const started = await h.request('POST', `/api/agents/${agentId}/test-runs`, { body: { test_ids: [used, other, none] } });
    expect(started.status).toBe(201);
    const run = await waitForRun(h, started.body.id);
    expect(run.status).toBe('completed');
    const result = (id: string) => run.tests.find((t: any) => t.test_id === id);
    const expectation = (id: string) => result(id).attempts[0].result.expectations[0];
    expect(result(used).results[0].passed).toBe(true);
    expect(expectation(used)).toMatchObject({ description: 'the agent answers using document Clinic-FAQ.md', passed: true, detail: null });
    expect(result(other).results[0].passed).toBe(false);
    expect(expectation(other)).toMatchObject({ passed: false, detail: 'no reply was given a passage of shipping.md (documents used: clinic-faq.md)' });
    expect(result(none).results[0].passed).toBe(false);
    expect(expectation(none)).toMatchObject({ passed: false, detail: 'no reply was given a knowledge-base passage' });
    expect(run.passed).toBe(false);
  });

  it('refuses a used_document expectation without a document', async () => {
    const res = await h.request('POST', `/api/agents/${agentId}/tests`, { body: { name: 'bad', kind: 'scripted', script: ['hi'], expectations: [{ type: 'used_document' }] } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/document/);
  });
});
