/**
 * Retrieval: one interface (KnowledgeRetriever), so the store behind it can change. This one is
 * PostgreSQL's: full-text search (the base's text search configuration, heading weighted above
 * the text) and, when pg_trgm is installed, the same search with the base's words most like the
 * query's by trigram similarity, which finds names, spelling slips and the inflections of
 * languages PostgreSQL does not stem; the lists are fused by reciprocal rank (ranking.ts). Needs
 * no API key. With an embeddings provider configured it is hybrid: the query's vector ranks the
 * chunks by cosine similarity too (semantic.ts), a third list of the same fusion; a semantic side
 * that fails or is slow is left out of that search, which answers its lexical lists.
 */
import { QueryTypes, type Transaction } from 'sequelize';
import type { Database } from '../db/database';
import type { Embedder } from '../providers/embeddings';
import type { RetrievalMethod, RetrievedPassage } from '../shared/knowledge';
import type { Logger } from '../shared/logger';
import { fuseRankings, type Ranked, type RankedList } from './ranking';
import { embeddingColumn, semanticRanking } from './semantic';

export interface SearchRequest {
  knowledgeBaseIds: string[];
  query: string;
  /** How many passages to answer (1–20). */
  topK: number;
  /** Passages whose best relevance (0–1) is below it are left out; default 0. */
  threshold?: number;
  /**
   * The longest the semantic side may take (a call's knowledge_timeout_ms, less room for the rest);
   * past it the search answers its lexical lists. Default EMBEDDINGS_TIMEOUT_MS.
   */
  semanticBudgetMs?: number;
}

export interface Retrieval {
  passages: RetrievedPassage[];
  /** `hybrid`: lexical and semantic lists fused; `lexical`: full text (and trigrams) alone. */
  method: RetrievalMethod;
  /** Why a configured semantic search was left out of this one (the embeddings server failed, too slow). */
  semanticError?: string;
}

export interface KnowledgeRetriever {
  search(request: SearchRequest): Promise<Retrieval>;
}

// Each list offers more candidates than asked for, so fusion has something to reorder.
const CANDIDATES_PER_TOP_K = 4;
// Below this a trigram match is noise; pg_trgm's default (0.3) already finds inflections and slips.
const TRIGRAM_THRESHOLD = 0.3;
// Words of the base taken for each query word, and query words looked at.
const SIMILAR_PER_WORD = 3;
const MAX_QUERY_WORDS = 24;
// Weighted reciprocal rank fusion (ranking.ts): trigrams are the fallback for what stemming misses.
const FULL_TEXT_WEIGHT = 1;
const TRIGRAM_WEIGHT = 0.7;
// Meaning counts as much as the query's own words: each finds what the other misses.
const SEMANTIC_WEIGHT = 1;
// A query longer than this is cut: a caller's turn, not a document.
const MAX_QUERY_CHARS = 1000;
// Query vectors kept per process (1,536 floats are 6 KB): callers ask the same few questions, and
// a tool round retrieves again with the same words; a kept vector costs no request and no wait.
const QUERY_VECTORS_KEPT = 1000;

class SemanticTimeout extends Error {}

export class PostgresRetriever implements KnowledgeRetriever {
  private trigram: Promise<boolean> | null = null;

  private readonly embedder: Embedder | null;
  private readonly log: Logger | undefined;
  // Least recently used first (a Map keeps insertion order).
  private readonly queryVectors = new Map<string, Float32Array>();

  /** `embedder`: semantic search on (hybrid); null or absent: lexical only. */
  constructor(
    private readonly db: Database,
    options: { embedder?: Embedder | null; log?: Logger } = {},
  ) {
    this.embedder = options.embedder ?? null;
    this.log = options.log;
  }

  get method(): RetrievalMethod {
    return this.embedder ? 'hybrid' : 'lexical';
  }

  /** Whether the server has pg_trgm (the migration created it when it could). */
  hasTrigram(): Promise<boolean> {
    this.trigram ??= this.db.sequelize
      .query<{ n: number }>("SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'pg_trgm'", { type: QueryTypes.SELECT })
      .then((rows) => (rows[0]?.n ?? 0) > 0);
    return this.trigram;
  }

  async search(request: SearchRequest): Promise<Retrieval> {
    const query = request.query.slice(0, MAX_QUERY_CHARS).trim();
    if (!query || request.knowledgeBaseIds.length === 0) return { passages: [], method: this.method };
    const limit = request.topK * CANDIDATES_PER_TOP_K;
    // Beside the lexical lists, on a connection of its own: the query's embedding is an HTTP request.
    const semantic = this.embedder ? this.semantic(this.embedder, request.knowledgeBaseIds, query, limit, request.semanticBudgetMs) : null;
    const lists = await this.lexical(request.knowledgeBaseIds, query, limit).catch(async (err: unknown) => {
      await semantic; // never left running unobserved
      throw err;
    });
    const outcome = semantic ? await semantic : null;
    if (outcome && 'items' in outcome) lists.push({ items: outcome.items, weight: SEMANTIC_WEIGHT });
    const fused = fuseRankings(lists)
      .filter((f) => f.relevance >= (request.threshold ?? 0))
      .slice(0, request.topK);
    const passages = await this.passages(fused);
    if (outcome && 'error' in outcome) return { passages, method: 'lexical', semanticError: outcome.error };
    return { passages, method: this.method };
  }

  private async lexical(ids: string[], query: string, limit: number): Promise<RankedList[]> {
    const configs = await this.configsOf(ids);
    return this.db.sequelize.transaction(async (transaction) => {
      const out: RankedList[] = [];
      for (const [config, byConfig] of configs) out.push({ items: await this.fullText(transaction, config, byConfig, query, limit), weight: FULL_TEXT_WEIGHT });
      if (await this.hasTrigram()) {
        // The base's words like the query's (misspelt, inflected), searched as full text.
        const similar = await this.similarWords(transaction, ids, query);
        if (similar.length > 0) {
          for (const [config, byConfig] of configs) out.push({ items: await this.fullText(transaction, config, byConfig, similar.join(' '), limit), weight: TRIGRAM_WEIGHT });
        }
      }
      return out;
    });
  }

  /**
   * The semantic list: the query embedded (one request), the chunks ranked by cosine similarity.
   * Never throws: a failure or a budget overrun is answered as the reason, and the search goes on
   * lexical. The ranking's statement is cancelled by PostgreSQL at the budget, not left running.
   */
  private async semantic(embedder: Embedder, ids: string[], query: string, limit: number, budgetMs?: number): Promise<{ items: Ranked[] } | { error: string }> {
    const budget = Math.max(1, Math.round(Math.min(budgetMs ?? embedder.settings.timeoutMs, embedder.settings.timeoutMs)));
    const started = performance.now();
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const work = (async () => {
      const vector = await this.queryVector(embedder, query, budget, abort.signal);
      const column = await embeddingColumn(this.db);
      return this.db.sequelize.transaction(async (transaction) => {
        const left = Math.max(1, Math.round(budget - (performance.now() - started)));
        await this.db.sequelize.query(`SELECT set_config('statement_timeout', '${left}', true)`, { transaction });
        return semanticRanking(this.db, transaction, column, { knowledgeBaseIds: ids, model: embedder.model, vector, limit, minSimilarity: embedder.settings.minSimilarity });
      });
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
      this.log?.warn('knowledge search went on without its semantic list', { error, model: embedder.model });
      return { error };
    } finally {
      clearTimeout(timer);
    }
  }

  /** The query's vector: a kept one, else one embeddings request. */
  private async queryVector(embedder: Embedder, query: string, budget: number, signal: AbortSignal): Promise<Float32Array> {
    const kept = this.queryVectors.get(query);
    if (kept) {
      this.queryVectors.delete(query);
      this.queryVectors.set(query, kept);
      return kept;
    }
    const [vector] = await embedder.embed([query], { timeoutMs: budget, signal });
    this.queryVectors.set(query, vector!);
    if (this.queryVectors.size > QUERY_VECTORS_KEPT) this.queryVectors.delete(this.queryVectors.keys().next().value!);
    return vector!;
  }

  /** The bases' text search configurations, each with its bases (usually one configuration). */
  private async configsOf(ids: string[]): Promise<Map<string, string[]>> {
    const rows = await this.db.models.KnowledgeBase.findAll({ where: { id: ids }, attributes: ['id', 'ts_config'] });
    const byConfig = new Map<string, string[]>();
    for (const row of rows) {
      const config = row.get('ts_config') as string;
      byConfig.set(config, [...(byConfig.get(config) ?? []), row.get('id') as string]);
    }
    return byConfig;
  }

  private fullText(transaction: Transaction, config: string, ids: string[], query: string, limit: number): Promise<Ranked[]> {
    // Any of the query's words, not all of them (plainto_tsquery ANDs): a caller's question holds
    // words no passage has. ts_rank's normalisation 32 maps the rank into 0–1.
    return this.db.sequelize.query<Ranked>(
      `SELECT c.id, ts_rank(c.tsv, q.query, 32) AS relevance
         FROM knowledge_chunks c,
              (SELECT replace(plainto_tsquery(CAST(:config AS regconfig), :query)::text, ' & ', ' | ')::tsquery AS query) q
        WHERE c.knowledge_base_id IN (:ids) AND c.tsv @@ q.query
        ORDER BY relevance DESC, c.id LIMIT :limit`,
      { replacements: { config, ids, query, limit }, type: QueryTypes.SELECT, transaction },
    );
  }

  /**
   * For each query word, the base's words most like it by trigram similarity (knowledge_words,
   * its GIN index serving `%`): "Bluedartt" → "bluedart", "खुलता" → "खुला". Short strings only,
   * so this stays a few milliseconds however large the base.
   */
  private async similarWords(transaction: Transaction, ids: string[], query: string): Promise<string[]> {
    const words = [...new Set(query.toLowerCase().split(/[^\p{L}\p{M}\p{N}]+/u).filter((w) => w.length >= 3))].slice(0, MAX_QUERY_WORDS);
    if (words.length === 0) return [];
    // `%` reads its threshold from this setting; `true`: for this transaction only.
    await this.db.sequelize.query(`SELECT set_config('pg_trgm.similarity_threshold', '${TRIGRAM_THRESHOLD}', true)`, { transaction });
    const rows = await this.db.sequelize.query<{ word: string }>(
      `SELECT DISTINCT w.word FROM unnest(ARRAY[:words]::text[]) AS q(word),
              LATERAL (SELECT k.word FROM knowledge_words k
                        WHERE k.knowledge_base_id IN (:ids) AND k.word % q.word
                        ORDER BY similarity(k.word, q.word) DESC, k.word LIMIT ${SIMILAR_PER_WORD}) w`,
      { replacements: { ids, words }, type: QueryTypes.SELECT, transaction },
    );
    return rows.map((r) => r.word);
  }

  /** The fused order, each passage scored by its best relevance (0–1: comparable across queries, unlike RRF sums). */
  private async passages(fused: Array<{ id: string; relevance: number }>): Promise<RetrievedPassage[]> {
    if (fused.length === 0) return [];
    const rows = await this.db.sequelize.query<Omit<RetrievedPassage, 'score'>>(
      `SELECT c.id AS chunk_id, c.knowledge_base_id, c.document_id, d.name AS document, c.heading, c.content
         FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id
        WHERE c.id IN (:ids)`,
      { replacements: { ids: fused.map((f) => f.id) }, type: QueryTypes.SELECT },
    );
    const byId = new Map(rows.map((r) => [r.chunk_id, r]));
    return fused.flatMap((f) => {
      const row = byId.get(f.id);
      return row ? [{ ...row, score: Math.round(f.relevance * 1e4) / 1e4 }] : [];
    });
  }
}

/**
 * The retriever calls use, built from a database and an embedder (null: lexical only): what the
 * worker, the API, the media gateway and scripts (benchmarks) construct, so each ranks alike.
 */
export function createKnowledgeRetriever(db: Database, embedder: Embedder | null, log?: Logger): PostgresRetriever {
  return new PostgresRetriever(db, { embedder, ...(log ? { log } : {}) });
}
