/**
 * Retrieval: one interface (KnowledgeRetriever), so the store behind it can change. This one is
 * PostgreSQL's: full-text search (the base's text search configuration, heading weighted above
 * the text) and, when pg_trgm is installed, the same search with the base's words most like the
 * query's by trigram similarity, which finds names, spelling slips and the inflections of
 * languages PostgreSQL does not stem; the lists are fused by reciprocal rank (ranking.ts). Needs
 * no API key.
 */
import { QueryTypes } from 'sequelize';
import type { Database } from '../db/database';
import type { RetrievedPassage } from '../shared/knowledge';
import { fuseRankings, type Ranked, type RankedList } from './ranking';

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
}

export interface KnowledgeRetriever {
  search(request: SearchRequest): Promise<RetrievedPassage[]>;
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
// A query longer than this is cut: a caller's turn, not a document.
const MAX_QUERY_CHARS = 1000;

/** A candidate of one list: its rank inputs and the passage itself, so no second read is needed. */
type Candidate = Ranked & Omit<RetrievedPassage, 'score' | 'chunk_id'>;

// A base's text search configuration never changes after creation (its language is fixed).
const CONFIG_CACHE_SIZE = 1000;

/**
 * The budget as `SET LOCAL statement_timeout` in the same message as the statement: one simple
 * query is one implicit transaction, so it bounds that statement only, with no round trip of its
 * own and no transaction holding a connection. Abandoned searches waiting on a locked chunk table
 * once held all of a worker's connections, and its calls stopped (knowledge-timeout.test.ts).
 */
function bounded(sql: string, timeoutMs: number | undefined): string {
  return timeoutMs === undefined ? sql : `SET LOCAL statement_timeout = ${Math.max(1, Math.ceil(timeoutMs))}; ${sql}`;
}

export class PostgresRetriever implements KnowledgeRetriever {
  private trigram: Promise<boolean> | null = null;
  private readonly configs = new Map<string, string>();

  constructor(private readonly db: Database) {}

  /** Whether the server has pg_trgm (the migration created it when it could). */
  hasTrigram(): Promise<boolean> {
    this.trigram ??= this.db.sequelize
      .query<{ n: number }>("SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'pg_trgm'", { type: QueryTypes.SELECT })
      .then((rows) => (rows[0]?.n ?? 0) > 0);
    return this.trigram;
  }

  /**
   * Two round trips on the turn path (a turn waits for it): the full-text list and the similar
   * words at once, then the similar words' list. Each list brings its passages with it.
   */
  async search(request: SearchRequest): Promise<RetrievedPassage[]> {
    const query = request.query.slice(0, MAX_QUERY_CHARS).trim();
    if (!query || request.knowledgeBaseIds.length === 0) return [];
    const limit = request.topK * CANDIDATES_PER_TOP_K;
    const { timeoutMs } = request;
    const configs = [...(await this.configsOf(request.knowledgeBaseIds, timeoutMs))];
    const [exact, similar] = await Promise.all([
      Promise.all(configs.map(([config, ids]) => this.fullText(config, ids, query, limit, timeoutMs))),
      this.hasTrigram().then((has) => (has ? this.similarWords(request.knowledgeBaseIds, query, timeoutMs) : [])),
    ]);
    // The base's words like the query's (misspelt, inflected), searched as full text.
    const alike = similar.length > 0 ? await Promise.all(configs.map(([config, ids]) => this.fullText(config, ids, similar.join(' '), limit, timeoutMs))) : [];
    const lists: RankedList[] = [...exact.map((items) => ({ items, weight: FULL_TEXT_WEIGHT })), ...alike.map((items) => ({ items, weight: TRIGRAM_WEIGHT }))];
    const byId = new Map(lists.flatMap((list) => (list.items as Candidate[]).map((c) => [c.id, c] as const)));
    // Each passage scored by its best relevance (0–1: comparable across queries, unlike RRF sums).
    return fuseRankings(lists)
      .filter((f) => f.relevance >= (request.threshold ?? 0))
      .slice(0, request.topK)
      .map((f) => {
        const { id, relevance: _relevance, ...passage } = byId.get(f.id)!;
        return { chunk_id: id, ...passage, score: Math.round(f.relevance * 1e4) / 1e4 };
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
    const words = [...new Set(query.toLowerCase().split(/[^\p{L}\p{M}\p{N}]+/u).filter((w) => w.length >= 3))].slice(0, MAX_QUERY_WORDS);
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
