/**
 * `auto` retrieval for one LLM request (docs/knowledge-base.md), the one path text calls (the
 * llmTurn activity) and any other runner of an LlmTurnRequest share: retrieve with the caller's
 * last words, put the passages in a delimited system message just before them, and answer what
 * happened as the event the workflow records. A retrieval slower than its budget, or failing, is
 * skipped for this turn: the request goes to the LLM without passages, never later than the budget.
 */
import type { LlmMessage, LlmTurnRequest } from '../../workflows/call-definitions';
import { KNOWLEDGE_TOP_K, knowledgeContextMessage, type KnowledgeOutcome } from '../shared/knowledge';
import type { KnowledgeRetriever, SearchRequest } from './retrieval';
import { PrefetchingRetriever } from './prefetch';
import { isStatementTimeout } from './bounded-sql';

// "And on Saturday?" says little alone: a reply this short is searched with the turn before it.
const SHORT_UTTERANCE_WORDS = 4;
// The share of knowledge_timeout_ms the query's embedding and vector ranking may take.
const SEMANTIC_SHARE = 0.8;

/** The search query of a request: the caller's last message, with the one before when it is short. */
export function knowledgeQuery(messages: LlmMessage[]): string {
  const said = messages.flatMap((m) => (m.role === 'user' && m.content.trim() ? [m.content.trim()] : []));
  const last = said[said.length - 1] ?? '';
  const previous = said[said.length - 2];
  return previous && last.split(/\s+/).length < SHORT_UTTERANCE_WORDS ? `${previous} ${last}` : last;
}

/** The search an `auto` request asks for, or null when it asks for none. */
export function knowledgeSearchOf(request: LlmTurnRequest): SearchRequest | null {
  const { knowledge } = request;
  if (!knowledge || knowledge.knowledgeBaseIds.length === 0) return null;
  const query = knowledgeQuery(request.messages);
  return query ? { knowledgeBaseIds: knowledge.knowledgeBaseIds, query, topK: KNOWLEDGE_TOP_K, timeoutMs: knowledge.timeoutMs, semanticBudgetMs: knowledge.timeoutMs * SEMANTIC_SHARE } : null;
}

/** Starts the search `request` will ask for, on a retriever that keeps it for the turn (prefetch.ts). */
export function prefetchKnowledge(retriever: PrefetchingRetriever | undefined, request: LlmTurnRequest | null): void {
  const wanted = request && knowledgeSearchOf(request);
  if (retriever && wanted) retriever.prefetch(wanted);
}

class RetrievalTimeout extends Error {}

export async function withKnowledge(retriever: KnowledgeRetriever, request: LlmTurnRequest): Promise<{ messages: LlmMessage[]; knowledge?: KnowledgeOutcome }> {
  const { knowledge } = request;
  const wanted = knowledgeSearchOf(request);
  if (!knowledge || !wanted) return { messages: request.messages };
  const { query } = wanted;
  const started = performance.now();
  // Started on the interim transcript (prefetch.ts): said in the event, as its `ms` is then shorter.
  const early = retriever instanceof PrefetchingRetriever ? retriever.take(wanted) : null;
  const prefetched = early !== null;
  const base = { knowledge_base_ids: knowledge.knowledgeBaseIds, query, mode: 'auto' as const, ...(prefetched ? { prefetched: true } : {}) };
  const elapsed = () => Math.round(performance.now() - started);
  let timer: NodeJS.Timeout | undefined;
  try {
    // The budget goes with the search (knowledgeSearchOf): the store stops one the turn no longer
    // waits for, and the semantic side gets most of it, so a slow embeddings server still leaves
    // the lexical answer in time rather than skipping the retrieval.
    const search = early ?? retriever.search(wanted);
    // A late answer (or the store's own cancellation) after the timeout is dropped.
    search.catch(() => undefined);
    const { passages, method, semanticError } = await Promise.race([
      search,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new RetrievalTimeout()), knowledge.timeoutMs))),
    ]);
    const chunks = passages.map((p) => ({ chunk_id: p.chunk_id, knowledge_base_id: p.knowledge_base_id, document: p.document, heading: p.heading, score: p.score }));
    const outcome: KnowledgeOutcome = { event: 'knowledge_retrieved', data: { ...base, chunks, ms: elapsed(), method, ...(semanticError ? { semantic_error: semanticError } : {}) } };
    if (passages.length === 0) return { messages: request.messages, knowledge: outcome };
    // Just before the caller's last words, so they stay the last thing the LLM reads.
    const at = request.messages.map((m) => m.role).lastIndexOf('user');
    const messages = [...request.messages];
    messages.splice(at < 0 ? messages.length : at, 0, { role: 'system', content: knowledgeContextMessage(passages) });
    return { messages, knowledge: outcome };
  } catch (err) {
    const reason = err instanceof RetrievalTimeout || isStatementTimeout(err) ? `timeout after ${knowledge.timeoutMs} ms` : `retrieval failed: ${(err as Error).message}`;
    return { messages: request.messages, knowledge: { event: 'knowledge_skipped', data: { ...base, reason, ms: elapsed() } } };
  } finally {
    clearTimeout(timer);
  }
}
