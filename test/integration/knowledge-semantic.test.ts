/**
 * Semantic (hybrid) knowledge-base search end to end (docs/knowledge-base.md, "Semantic search"):
 * documents ingested by the real workflow and worker with an OpenAI-compatible embeddings server
 * (the local fake, whose vectors place synonyms together), their vectors stored beside the chunks,
 * questions that share no word with their answer found by hybrid search and not by lexical
 * search, and an embeddings server that is down or slow giving lexical results with the reason
 * in the event, never a failed turn.
 */
import { QueryTypes } from 'sequelize';
import { createKnowledgeRetriever } from '../../src/knowledge/retrieval';
import { FAKE_EMBEDDING_DIMENSIONS, startFakeEmbeddings, type FakeEmbeddings } from '../fakes/embeddings-server';
import { eventually } from '../support/fixtures';
import { events, h, hangUp, llm, say, startText, useTextCallStack } from '../support/text-call-stack';

let embeddings: FakeEmbeddings;
// Filled before the stack starts (its beforeAll runs after this file's first one).
const env: Record<string, string> = {
  EMBEDDINGS_API_KEY: 'sk-test-embeddings',
  EMBEDDINGS_MODEL: 'fake-embed-1',
  // Two chunks a request, so the five-chunk document takes three.
  EMBEDDINGS_BATCH_SIZE: '2',
  EMBEDDINGS_TIMEOUT_MS: '1000',
  // The fake's cosines run lower than a real model's: its vectors are hashed words.
  EMBEDDINGS_MIN_SIMILARITY: '0.2',
};
beforeAll(async () => {
  embeddings = await startFakeEmbeddings({ apiKey: 'sk-test-embeddings' });
  env.EMBEDDINGS_BASE_URL = embeddings.url;
});
useTextCallStack({ env });
afterAll(async () => {
  await embeddings?.stop();
});
beforeEach(() => embeddings.reset());

const CLINIC = `# Sunrise Clinic

## Doctor consultation

The fee for a consultation with a doctor is 40 euros, paid at the desk.

## Parking

The Elm Street garage next door is free for two hours.

## Pets

Dogs on a lead are welcome in the waiting room.

## Opening hours

We open at nine on Saturdays and stay shut on Sundays.

## Refunds

A cancelled visit is reimbursed within five working days.
`;

// Each shares no word (nor stem, nor trigram-like word) with the passage that answers it.
const SYNONYM_QUESTIONS = [
  { query: 'What does it cost to see a physician?', heading: 'Sunrise Clinic > Doctor consultation' },
  { query: 'When do I get my money back?', heading: 'Sunrise Clinic > Refunds' },
  { query: 'Can I bring my cat?', heading: 'Sunrise Clinic > Pets' },
];

let baseId: string;
let documentId: string;

async function search(query: string) {
  const res = await h.request('POST', `/api/knowledge-bases/${baseId}/search`, { body: { query, top_k: 3 } });
  expect(res.status).toBe(200);
  return res.body as { passages: Array<{ heading: string; score: number }>; method: string; semantic_error?: string };
}

beforeAll(async () => {
  const base = await h.request('POST', '/api/knowledge-bases', { body: { name: 'semantic-clinic', language: 'en' } });
  expect(base.status).toBe(201);
  baseId = base.body.id;
  const doc = await h.request('POST', `/api/knowledge-bases/${baseId}/documents`, { body: { name: 'clinic.md', content_base64: Buffer.from(CLINIC).toString('base64') } });
  expect(doc.status).toBe(202);
  documentId = doc.body.id;
  const seen = new Set<string>();
  const ready = await eventually(
    async () => {
      const res = await h.request('GET', `/api/knowledge-bases/${baseId}/documents/${documentId}`);
      seen.add(`${res.body.status} ${res.body.progress} ${res.body.stage}`);
      return res.body.status !== 'processing' && res.body;
    },
    20_000,
    20,
  );
  expect({ status: ready.status, error: ready.error, chunks: ready.chunk_count }).toEqual({ status: 'ready', error: null, chunks: 5 });
  for (const figure of seen) expect(figure).toMatch(/^(processing (0 queued|30 extracting|60 chunking|70 embedding|80 indexing)|ready 100 null)$/);
});

it('embeds every chunk while indexing, in batches, and stores the normalised vectors with their model', async () => {
  // The ingestion ran in beforeAll; its requests were recorded before this test's reset, so re-index.
  expect((await h.request('POST', `/api/knowledge-bases/${baseId}/documents/${documentId}/refresh`)).status).toBe(202);
  await eventually(async () => embeddings.requests.length >= 3 && (await h.request('GET', `/api/knowledge-bases/${baseId}/documents/${documentId}`)).body.status === 'ready', 20_000, 20);
  // Five chunks (the title has no text of its own), two a request.
  expect(embeddings.requests.map((r) => r.inputs.length)).toEqual([2, 2, 1]);
  expect(embeddings.requests.every((r) => r.model === 'fake-embed-1' && r.encoding_format === 'float' && r.authorization === 'Bearer sk-test-embeddings')).toBe(true);
  // A chunk is embedded with its heading path.
  expect(embeddings.requests.flatMap((r) => r.inputs)).toContain('Sunrise Clinic > Pets\n\nDogs on a lead are welcome in the waiting room.');
  const rows = await h.db.sequelize.query<{ dims: number; model: string; norm: number }>(
    `SELECT cardinality(embedding) AS dims, embedding_model AS model, (SELECT sqrt(sum(v * v)) FROM unnest(embedding) v) AS norm
       FROM knowledge_chunks WHERE document_id = :documentId`,
    { replacements: { documentId }, type: QueryTypes.SELECT },
  );
  expect(rows).toHaveLength(5);
  for (const row of rows) {
    expect({ dims: row.dims, model: row.model }).toEqual({ dims: FAKE_EMBEDDING_DIMENSIONS, model: 'fake-embed-1' });
    expect(row.norm).toBeCloseTo(1, 4);
  }
});

it('finds the answer to a question that shares no word with it by hybrid search, which lexical search does not', async () => {
  const lexical = createKnowledgeRetriever(h.db, null);
  for (const q of SYNONYM_QUESTIONS) {
    const plain = await lexical.search({ knowledgeBaseIds: [baseId], query: q.query, topK: 3 });
    expect({ query: q.query, method: plain.method, found: plain.passages.map((p) => p.heading) }).toEqual({ query: q.query, method: 'lexical', found: [] });
    embeddings.reset();
    const hybrid = await search(q.query);
    expect({ query: q.query, method: hybrid.method, top: hybrid.passages[0]?.heading }).toEqual({ query: q.query, method: 'hybrid', top: q.heading });
    expect(hybrid.passages[0]!.score).toBeGreaterThan(0.2);
    // One request a search: the query alone; the same words again are answered from the kept vector.
    expect(embeddings.requests.map((r) => r.inputs)).toEqual([[q.query]]);
    expect((await search(q.query)).passages[0]?.heading).toBe(q.heading);
    expect(embeddings.requests).toHaveLength(1);
  }
  // Word matches still count: an exact question is answered first, in hybrid as in lexical.
  expect((await search('Elm Street garage')).passages[0]?.heading).toBe('Sunrise Clinic > Parking');
  // A greeting is like no passage: nothing semantic passes the similarity floor.
  expect((await search('hello there')).passages).toEqual([]);
});

it('answers lexical results with the reason when the embeddings server is down or slow', async () => {
  // Words not searched before: a query's vector, once had, is kept and asks the server nothing.
  embeddings.fail(503);
  const down = await search('the Elm Street garage');
  expect(down).toMatchObject({ method: 'lexical', semantic_error: expect.stringMatching(/^semantic search failed: 503/) });
  expect(down.passages[0]?.heading).toBe('Sunrise Clinic > Parking');
  embeddings.reset();
  embeddings.setDelay(3000);
  const started = Date.now();
  const slow = await search('Elm Street garage parking');
  expect(Date.now() - started).toBeLessThan(2500);
  expect(slow).toMatchObject({ method: 'lexical', semantic_error: 'semantic search took longer than 1000 ms' });
  expect(slow.passages[0]?.heading).toBe('Sunrise Clinic > Parking');
});

describe('a text call answering from the base', () => {
  async function agent(name: string) {
    const res = await h.request('POST', '/api/agents', { body: { name, prompt: 'You answer for Sunrise Clinic.', knowledge_base_ids: [baseId], knowledge_mode: 'auto', knowledge_timeout_ms: 1500 } });
    expect(res.status).toBe(201);
  }
  const contextOf = (body: any) => body.messages.find((m: any) => m.role === 'system' && m.content.includes('<knowledge>'))?.content as string | undefined;

  it('gives the LLM the passage found by meaning, and the event says hybrid', async () => {
    await agent('semantic-auto');
    llm.setResponder(() => ({ content: 'It is 40 euros.' }));
    const call = await startText('semantic-auto');
    await say(call.call_id, 'What does it cost to see a physician?');
    expect(contextOf(llm.requests[0]!.body)).toContain('The fee for a consultation with a doctor is 40 euros');
    const retrieved = (await events(call.call_id)).filter((e) => e.event_type === 'knowledge_retrieved');
    expect(retrieved.map((e) => ({ method: e.data.method, top: e.data.chunks[0]?.heading, error: e.data.semantic_error }))).toEqual([
      { method: 'hybrid', top: 'Sunrise Clinic > Doctor consultation', error: undefined },
    ]);
    await hangUp(call.call_id);
  });

  it('tool: search_knowledge_base searches hybrid too, and its event says so', async () => {
    const res = await h.request('POST', '/api/agents', { body: { name: 'semantic-tool', prompt: 'You answer for Sunrise Clinic.', knowledge_base_ids: [baseId], knowledge_mode: 'tool' } });
    expect(res.status).toBe(201);
    llm.enqueue({ tool_calls: [{ name: 'search_knowledge_base', arguments: { query: 'physician cost' } }] }, { content: 'It is 40 euros.' });
    const call = await startText('semantic-tool');
    expect((await say(call.call_id, 'How much is it to see a physician?')).replies).toEqual(['It is 40 euros.']);
    const toolResult = llm.requests[1]!.body.messages.at(-1);
    expect(toolResult).toMatchObject({ role: 'tool', content: expect.stringContaining('The fee for a consultation with a doctor is 40 euros') });
    const retrieved = (await events(call.call_id)).filter((e) => e.event_type === 'knowledge_retrieved');
    expect(retrieved.map((e) => ({ mode: e.data.mode, method: e.data.method, top: e.data.chunks[0]?.heading }))).toEqual([{ mode: 'tool', method: 'hybrid', top: 'Sunrise Clinic > Doctor consultation' }]);
    await hangUp(call.call_id);
  });

  it('with the embeddings server down, the turn goes on with lexical passages and the event says why', async () => {
    await agent('semantic-down');
    embeddings.fail(500);
    llm.setResponder(() => ({ content: 'The garage is free for two hours.' }));
    const call = await startText('semantic-down');
    const reply = await say(call.call_id, 'Is the Elm Street garage free?');
    expect(reply.replies).toEqual(['The garage is free for two hours.']);
    expect(contextOf(llm.requests[0]!.body)).toContain('The Elm Street garage next door is free for two hours.');
    const retrieved = (await events(call.call_id)).filter((e) => e.event_type === 'knowledge_retrieved');
    expect(retrieved).toHaveLength(1);
    expect(retrieved[0]!.data).toMatchObject({ method: 'lexical', semantic_error: expect.stringMatching(/^semantic search failed: 500/), chunks: [expect.objectContaining({ heading: 'Sunrise Clinic > Parking' })] });
    await hangUp(call.call_id);
  });
});

it('retries an ingestion whose embeddings request failed, keeping the previous chunks searchable meanwhile', async () => {
  embeddings.fail(503);
  expect((await h.request('POST', `/api/knowledge-bases/${baseId}/documents/${documentId}/refresh`)).status).toBe(202);
  await eventually(async () => embeddings.requests.length > 0, 10_000, 20);
  // Mid-retry, the previous chunks still answer (lexically: the query's embedding fails too).
  expect(await search('a garage on Elm Street')).toMatchObject({ method: 'lexical', passages: [expect.objectContaining({ heading: 'Sunrise Clinic > Parking' })] });
  embeddings.fail(null);
  const doc = await eventually(async () => {
    const res = await h.request('GET', `/api/knowledge-bases/${baseId}/documents/${documentId}`);
    return res.body.status !== 'processing' && res.body;
  }, 20_000, 50);
  expect({ status: doc.status, error: doc.error }).toEqual({ status: 'ready', error: null });
  expect((await search('Can I bring my cat?')).passages[0]?.heading).toBe('Sunrise Clinic > Pets');
});
