/**
 * Retrieval: one interface (KnowledgeRetriever), so the store behind it can change. This one is
 * PostgreSQL's: full-text search (the base's text search configuration, heading weighted above
 * the text) and, when pg_trgm is installed, the same search with the base's words most like the
 * query's by trigram similarity, which finds names, spelling slips and the inflections of
 * languages PostgreSQL does not stem; the lists are fused by reciprocal rank (ranking.ts). Needs
 * no API key. With an embeddings provider configured it is hybrid: the query's vector ranks the
 * chunks by cosine similarity too (semantic-search.ts), a third list of the same fusion; a semantic
 * side that fails or is slow is left out of that search, which answers its lexical lists.
 */
import { QueryTypes } from 'sequelize';
import type { Database } from '../db/database';
import type { Embedder } from '../providers/embeddings';
import type { RetrievalMethod, RetrievedPassage } from '../shared/knowledge';
import type { Logger } from '../shared/logger';
import { bounded } from './bounded-sql';
import { fuseRankings, type Ranked, type RankedList } from './ranking';
import { SemanticSearch } from './semantic-search';

export interface SearchRequest {
  knowledgeBaseIds: string[];
  query: string;
  /** How many passages to answer (1–20). */
  topK: number;
  /** Passages whose best relevance (0–1) is below it are left out; default 0. */
  threshold?: number;
  /**
   * The caller's budget (a turn's knowledge_timeout_ms): past it, each statement of the search is
   * cancelled by PostgreSQL, so a search the turn gave up on does not keep a pooled connection.
   */
  timeoutMs?: number;
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

/** A query's words as the search sees them: lower case, split at anything not a letter, mark or digit. */
export function queryWords(text: string): string[] {
  return text.toLowerCase().split(/[^\p{L}\p{M}\p{N}]+/u).filter(Boolean);
}

/** A candidate of one list: its rank inputs and the passage itself, so no second read is needed. */
type Candidate = Ranked & Omit<RetrievedPassage, 'score' | 'chunk_id'>;

// A base's text search configuration never changes after creation (its language is fixed).
const CONFIG_CACHE_SIZE = 1000;

export class PostgresRetriever implements KnowledgeRetriever {
  private trigram: Promise<boolean> | null = null;
  private readonly configs = new Map<string, string>();
  private readonly semantic: SemanticSearch | null;

  /** `embedder`: semantic search on (hybrid); null or absent: lexical only. */
  constructor(
    private readonly db: Database,
    options: { embedder?: Embedder | null; log?: Logger } = {},
  ) {
    this.semantic = options.embedder ? new SemanticSearch(db, options.embedder, options.log) : null;
  }

  get method(): RetrievalMethod {
    return this.semantic ? 'hybrid' : 'lexical';
  }

  /** Whether the server has pg_trgm (the migration created it when it could). */
  hasTrigram(): Promise<boolean> {
    this.trigram ??= this.db.sequelize
      .query<{ n: number }>("SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'pg_trgm'", { type: QueryTypes.SELECT })
      .then((rows) => (rows[0]?.n ?? 0) > 0);
    return this.trigram;
  }

  /**
   * Two round trips on the turn path (a turn waits for it): the full-text list and the similar
   * words at once, then the similar words' list; each list brings its passages with it. The
   * semantic side (an HTTP request, then its ranking) runs beside them.
   */
  async search(request: SearchRequest): Promise<Retrieval> {
    const query = request.query.slice(0, MAX_QUERY_CHARS).trim();
    if (!query || request.knowledgeBaseIds.length === 0) return { passages: [], method: this.method };
    const limit = request.topK * CANDIDATES_PER_TOP_K;
    const semantic = this.semantic?.rank(request.knowledgeBaseIds, query, limit, request.semanticBudgetMs) ?? null;
    const lists = await this.lexical(request, query, limit).catch(async (err: unknown) => {
      await semantic; // never left running unobserved
      throw err;
    });
    const outcome = semantic ? await semantic : null;
    if (outcome && 'items' in outcome) lists.push({ items: outcome.items, weight: SEMANTIC_WEIGHT });
    const fused = fuseRankings(lists)
      .filter((f) => f.relevance >= (request.threshold ?? 0))
      .slice(0, request.topK);
    const passages = await this.passages(fused, lists, request.timeoutMs);
    if (outcome && 'error' in outcome) return { passages, method: 'lexical', semanticError: outcome.error };
    return { passages, method: this.method };
  }

  private async lexical(request: SearchRequest, query: string, limit: number): Promise<RankedList[]> {
    const { timeoutMs } = request;
    const configs = [...(await this.configsOf(request.knowledgeBaseIds, timeoutMs))];
    const [exact, similar] = await Promise.all([
      Promise.all(configs.map(([config, ids]) => this.fullText(config, ids, query, limit, timeoutMs))),
      this.hasTrigram().then((has) => (has ? this.similarWords(request.knowledgeBaseIds, query, timeoutMs) : [])),
    ]);
    // The base's words like the query's (misspelt, inflected), searched as full text.
    const alike = similar.length > 0 ? await Promise.all(configs.map(([config, ids]) => this.fullText(config, ids, similar.join(' '), limit, timeoutMs))) : [];
    return [...exact.map((items) => ({ items, weight: FULL_TEXT_WEIGHT })), ...alike.map((items) => ({ items, weight: TRIGRAM_WEIGHT }))];
  }

  /**
   * The fused order as passages, each scored by its best relevance (0–1: comparable across
   * queries, unlike RRF sums). The lexical lists brought theirs; only chunks the semantic list
   * alone found are read.
   */
  private async passages(fused: Array<{ id: string; relevance: number }>, lists: RankedList[], timeoutMs: number | undefined): Promise<RetrievedPassage[]> {
    const byId = new Map(lists.flatMap((list) => (list.items as Array<Ranked & Partial<Candidate>>).filter((c) => c.content !== undefined).map((c) => [c.id, c as Candidate] as const)));
    const missing = fused.filter((f) => !byId.has(f.id)).map((f) => f.id);
    if (missing.length > 0) {
      const rows = await this.db.sequelize.query<Candidate>(
        bounded(
          `SELECT c.id, 0 AS relevance, c.knowledge_base_id, c.document_id, d.name AS document, c.heading, c.content
             FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id WHERE c.id IN (:missing)`,
          timeoutMs,
        ),
        { replacements: { missing }, type: QueryTypes.SELECT },
      );
      for (const row of rows) byId.set(row.id, row);
    }
    return fused.flatMap((f) => {
      const found = byId.get(f.id);
      if (!found) return []; // deleted since it was ranked
      const { id, relevance: _relevance, ...passage } = found;
      return [{ chunk_id: id, ...passage, score: Math.round(f.relevance * 1e4) / 1e4 }];
    });
  }

  /** The bases' text search configurations, each with its bases (usually one configuration). */
  private async configsOf(ids: string[], timeoutMs: number | undefined): Promise<Map<string, string[]>> {
    const unknown = ids.filter((id) => !this.configs.has(id));
    if (unknown.length > 0) {
      const rows = await this.db.sequelize.query<{ id: string; ts_config: string }>(bounded('SELECT id, ts_config FROM knowledge_bases WHERE id IN (:unknown)', timeoutMs), {
        replacements: { unknown },
        type: QueryTypes.SELECT,
      });
      if (this.configs.size + rows.length > CONFIG_CACHE_SIZE) this.configs.clear();
      for (const row of rows) this.configs.set(row.id, row.ts_config);
    }
    const byConfig = new Map<string, string[]>();
    for (const id of ids) {
      // A deleted (or never created) base has no chunks: nothing to search.
      const config = this.configs.get(id);
      if (config) byConfig.set(config, [...(byConfig.get(config) ?? []), id]);
    }
    return byConfig;
  }

  private fullText(config: string, ids: string[], query: string, limit: number, timeoutMs: number | undefined): Promise<Candidate[]> {
    // Any of the query's words, not all of them (plainto_tsquery ANDs): a caller's question holds
    // words no passage has. ts_rank's normalisation 32 maps the rank into 0–1.
    return this.db.sequelize.query<Candidate>(
      bounded(`SELECT c.id, ts_rank(c.tsv, q.query, 32) AS relevance,
              c.knowledge_base_id, c.document_id, d.name AS document, c.heading, c.content
         FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id,
              (SELECT replace(plainto_tsquery(CAST(:config AS regconfig), :query)::text, ' & ', ' | ')::tsquery AS query) q
        WHERE c.knowledge_base_id IN (:ids) AND c.tsv @@ q.query
        ORDER BY relevance DESC, c.id LIMIT :limit`, timeoutMs),
      { replacements: { config, ids, query, limit }, type: QueryTypes.SELECT },
    );
  }

  /**
   * For each query word, the base's words most like it by trigram similarity (knowledge_words,
   * its GIN index serving `%`): "Bluedartt" → "bluedart", "खुलता" → "खुला". Short strings only,
   * so this stays a few milliseconds however large the base.
   */
  private async similarWords(ids: string[], query: string, timeoutMs: number | undefined): Promise<string[]> {
    const words = [...new Set(queryWords(query).filter((w) => w.length >= 3))].slice(0, MAX_QUERY_WORDS);
    if (words.length === 0) return [];
    // `%` (the index) uses the server's pg_trgm.similarity_threshold, 0.3 unless changed; the
    // explicit bound keeps ours whatever it is, without a round trip to set it.
    const rows = await this.db.sequelize.query<{ word: string }>(
      bounded(`SELECT DISTINCT w.word FROM unnest(ARRAY[:words]::text[]) AS q(word),
              LATERAL (SELECT k.word FROM knowledge_words k
                        WHERE k.knowledge_base_id IN (:ids) AND k.word % q.word AND similarity(k.word, q.word) >= ${TRIGRAM_THRESHOLD}
                        ORDER BY similarity(k.word, q.word) DESC, k.word LIMIT ${SIMILAR_PER_WORD}) w`, timeoutMs),
      { replacements: { ids, words }, type: QueryTypes.SELECT },
    );
    return rows.map((r) => r.word);
  }
}

/**
 * The retriever calls use, built from a database and an embedder (null: lexical only): what the
 * worker, the API, the media gateway and scripts (benchmarks) construct, so each ranks alike.
 */
export function createKnowledgeRetriever(db: Database, embedder: Embedder | null, log?: Logger): PostgresRetriever {
  return new PostgresRetriever(db, { embedder, ...(log ? { log } : {}) });
}
