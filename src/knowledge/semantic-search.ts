/**
 * The semantic side of a hybrid search (docs/knowledge-base.md, "Semantic search"): the query
 * embedded (one request, or a kept vector), the chunks ranked by cosine similarity (semantic.ts).
 * Never throws: a failure or a budget overrun is answered as the reason, and the search goes on
 * lexical. The ranking's statement is cancelled by PostgreSQL at the budget, not left running.
 */
import type { Database } from '../db/database';
import type { Embedder } from '../providers/embeddings';
import type { Logger } from '../shared/logger';
import type { Ranked } from './ranking';
import { embeddingColumn, semanticRanking } from './semantic';

// Query vectors kept per process (1,536 floats are 6 KB): callers ask the same few questions, and
// a tool round retrieves again with the same words; a kept vector costs no request and no wait.
const QUERY_VECTORS_KEPT = 1000;

class SemanticTimeout extends Error {}

export class SemanticSearch {
  // Least recently used first (a Map keeps insertion order).
  private readonly queryVectors = new Map<string, Float32Array>();

  constructor(
    private readonly db: Database,
    readonly embedder: Embedder,
    private readonly log?: Logger,
  ) {}

  async rank(ids: string[], query: string, limit: number, budgetMs?: number): Promise<{ items: Ranked[] } | { error: string }> {
    const { settings, model } = this.embedder;
    const budget = Math.max(1, Math.round(Math.min(budgetMs ?? settings.timeoutMs, settings.timeoutMs)));
    const started = performance.now();
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const work = (async () => {
      const vector = await this.queryVector(query, budget, abort.signal);
      const column = await embeddingColumn(this.db);
      const left = budget - (performance.now() - started);
      return semanticRanking(this.db, column, { knowledgeBaseIds: ids, model, vector, limit, minSimilarity: settings.minSimilarity }, left);
    })();
    try {
      const items = await Promise.race([
        work,
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new SemanticTimeout(`semantic search took longer than ${budget} ms`)), budget))),
      ]);
      return { items };
    } catch (err) {
      abort.abort();
      work.catch(() => undefined);
      const error = err instanceof SemanticTimeout ? err.message : `semantic search failed: ${(err as Error).message}`;
      this.log?.warn('knowledge search went on without its semantic list', { error, model });
      return { error };
    } finally {
      clearTimeout(timer);
    }
  }

  /** The query's vector: a kept one, else one embeddings request. */
  private async queryVector(query: string, budget: number, signal: AbortSignal): Promise<Float32Array> {
    const kept = this.queryVectors.get(query);
    if (kept) {
      this.queryVectors.delete(query);
      this.queryVectors.set(query, kept);
      return kept;
    }
    const [vector] = await this.embedder.embed([query], { timeoutMs: budget, signal });
    this.queryVectors.set(query, vector!);
    if (this.queryVectors.size > QUERY_VECTORS_KEPT) this.queryVectors.delete(this.queryVectors.keys().next().value!);
    return vector!;
  }
}
