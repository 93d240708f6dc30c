/** `auto` retrieval of one LLM request (src/knowledge/turn-knowledge.ts): the query, the context message, the budget. */
import type { LlmTurnRequest } from '../../workflows/call-definitions';
import type { KnowledgeRetriever } from '../../src/knowledge/retrieval';
import { knowledgeQuery, withKnowledge } from '../../src/knowledge/turn-knowledge';
import type { RetrievedPassage } from '../../src/shared/knowledge';

const passage: RetrievedPassage = { chunk_id: 'c1', knowledge_base_id: 'kb1', document_id: 'd1', document: 'faq.md', heading: 'FAQ > Prices', content: 'A blood test costs 25 euros.', score: 0.8 };
const request = (messages: LlmTurnRequest['messages'], timeoutMs = 200): LlmTurnRequest => ({
  callId: 'call',
  provider: 'openai',
  model: 'm',
  messages,
  tools: [],
  knowledge: { knowledgeBaseIds: ['kb1'], timeoutMs },
});
const retriever = (search: KnowledgeRetriever['search']): KnowledgeRetriever => ({ search });

it('searches with the last utterance, and with the one before when the last is short', () => {
  expect(knowledgeQuery([{ role: 'system', content: 'x' }, { role: 'user', content: 'How much is a blood test?' }])).toBe('How much is a blood test?');
  expect(knowledgeQuery([{ role: 'user', content: 'Are you open on Saturday?' }, { role: 'assistant', content: 'Yes.' }, { role: 'user', content: 'And Sunday?' }])).toBe('Are you open on Saturday? And Sunday?');
  expect(knowledgeQuery([{ role: 'system', content: 'x' }])).toBe('');
});

it('puts the passages in a delimited system message just before the caller\'s words and reports them', async () => {
  const messages: LlmTurnRequest['messages'] = [{ role: 'system', content: 'prompt' }, { role: 'user', content: 'How much is a blood test?' }];
  const out = await withKnowledge(retriever(async () => ({ passages: [passage], method: 'lexical' })), request(messages));
  expect(out.messages.map((m) => m.role)).toEqual(['system', 'system', 'user']);
  expect(out.messages[1]!.content).toMatch(/^Knowledge base passages[^]*<knowledge>\n\[1\] faq\.md — FAQ > Prices\nA blood test costs 25 euros\.\n<\/knowledge>$/);
  expect(out.knowledge).toEqual({
    event: 'knowledge_retrieved',
    data: { knowledge_base_ids: ['kb1'], query: 'How much is a blood test?', mode: 'auto', chunks: [{ chunk_id: 'c1', knowledge_base_id: 'kb1', document: 'faq.md', heading: 'FAQ > Prices', score: 0.8 }], ms: expect.any(Number), method: 'lexical' },
  });
  // The request itself is not changed.
  expect(messages).toHaveLength(2);
});

it('skips a retrieval slower than its budget within the budget, and one that fails, with the reason', async () => {
  // Unref'd: a search nobody waits for must not hold the test process open.
  const slowSearch = jest.fn<ReturnType<KnowledgeRetriever['search']>, Parameters<KnowledgeRetriever['search']>>(
    () => new Promise((resolve) => setTimeout(() => resolve({ passages: [passage], method: 'lexical' }), 2000).unref()),
  );
  const started = Date.now();
  const late = await withKnowledge(retriever(slowSearch), request([{ role: 'user', content: 'hours?' }], 50));
  expect(Date.now() - started).toBeLessThan(500);
  // The store is told the budget, so it can stop a search nobody waits for.
  expect(slowSearch).toHaveBeenCalledWith(expect.objectContaining({ query: 'hours?', timeoutMs: 50 }));
  expect(late.messages).toEqual([{ role: 'user', content: 'hours?' }]);
  expect(late.knowledge).toMatchObject({ event: 'knowledge_skipped', data: { reason: 'timeout after 50 ms', query: 'hours?' } });

  const broken = await withKnowledge(retriever(async () => Promise.reject(new Error('connection refused'))), request([{ role: 'user', content: 'hours?' }]));
  expect(broken.knowledge).toMatchObject({ event: 'knowledge_skipped', data: { reason: 'retrieval failed: connection refused' } });

  // PostgreSQL's own cancellation at the budget (bounded-sql.ts) can win the race with the turn's
  // timer: it is the same timeout, as Sequelize wraps it.
  const cancelled = Object.assign(new Error('canceling statement due to statement timeout'), { original: { code: '57014' } });
  const serverSide = await withKnowledge(retriever(async () => Promise.reject(cancelled)), request([{ role: 'user', content: 'hours?' }], 50));
  expect(serverSide.knowledge).toMatchObject({ event: 'knowledge_skipped', data: { reason: 'timeout after 50 ms' } });
});

it('asks nothing of a request without knowledge, and adds no message when nothing matched', async () => {
  const search = jest.fn(async () => ({ passages: [] as RetrievedPassage[], method: 'lexical' as const }));
  const plain = { ...request([{ role: 'user', content: 'hi' }]), knowledge: undefined };
  expect(await withKnowledge(retriever(search), plain)).toEqual({ messages: plain.messages });
  expect(search).not.toHaveBeenCalled();
  const none = await withKnowledge(retriever(search), request([{ role: 'user', content: 'hi' }]));
  expect(none.messages).toHaveLength(1);
  expect(none.knowledge).toMatchObject({ event: 'knowledge_retrieved', data: { chunks: [] } });
});

it('records the method, and the reason a configured semantic side was left out, and gives the semantic side most of the budget', async () => {
  const search = jest.fn<ReturnType<KnowledgeRetriever['search']>, Parameters<KnowledgeRetriever['search']>>(async () => ({ passages: [passage], method: 'lexical', semanticError: 'semantic search failed: 503 down' }));
  const out = await withKnowledge(retriever(search), request([{ role: 'user', content: 'How much is a blood test?' }], 250));
  expect(out.knowledge).toMatchObject({ event: 'knowledge_retrieved', data: { method: 'lexical', semantic_error: 'semantic search failed: 503 down', chunks: [{ chunk_id: 'c1' }] } });
  expect(search.mock.calls[0]![0]).toMatchObject({ semanticBudgetMs: 200, topK: 4 });
  const hybrid = await withKnowledge(retriever(async () => ({ passages: [passage], method: 'hybrid' })), request([{ role: 'user', content: 'How much is a blood test?' }]));
  expect(hybrid.knowledge!.data).toMatchObject({ method: 'hybrid' });
  expect(hybrid.knowledge!.data).not.toHaveProperty('semantic_error');
});
