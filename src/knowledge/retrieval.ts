/**
 * Retrieval: one interface (KnowledgeRetriever), so the store behind it can change. This one is
 * PostgreSQL's: full-text search (the base's text search configuration, heading weighted above
 * the text) and, when pg_trgm is installed, the same search with the base's words most like the
 * query's by trigram similarity, which finds names, spelling slips and the inflections of
 * languages PostgreSQL does not stem; the lists are fused by reciprocal rank (ranking.ts). Needs
 * no API key.
 */
import { QueryTypes, type Transaction } from 'sequelize';
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

export class PostgresRetriever implements KnowledgeRetriever {
  private trigram: Promise<boolean> | null = null;

  constructor(private readonly db: Database) {}

  /** Whether the server has pg_trgm (the migration created it when it could). */
  hasTrigram(): Promise<boolean> {
    this.trigram ??= this.db.sequelize
      .query<{ n: number }>("SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'pg_trgm'", { type: QueryTypes.SELECT })
      .then((rows) => (rows[0]?.n ?? 0) > 0);
    return this.trigram;
  }

  async search(request: SearchRequest): Promise<RetrievedPassage[]> {
    const query = request.query.slice(0, MAX_QUERY_CHARS).trim();
    if (!query || request.knowledgeBaseIds.length === 0) return [];
    const limit = request.topK * CANDIDATES_PER_TOP_K;
    const trigram = await this.hasTrigram();
    // Every statement in one transaction, so the budget (statement_timeout, this transaction
    // only) bounds each: a search held up (a lock on the chunks, a slow plan) is cancelled by
    // the server instead of holding a connection the pool's other users (a call's activities,
    // the API) wait for: abandoned searches waiting on a locked chunk table once held all of a
    // worker's connections, and its calls stopped (knowledge-timeout.test.ts).
    return this.db.sequelize.transaction(async (transaction) => {
      if (request.timeoutMs !== undefined) {
        await this.db.sequelize.query(`SELECT set_config('statement_timeout', :ms, true)`, { replacements: { ms: String(Math.max(1, Math.ceil(request.timeoutMs))) }, transaction });
      }
      const configs = await this.configsOf(transaction, request.knowledgeBaseIds);
      const lists: RankedList[] = [];
      for (const [config, ids] of configs) lists.push({ items: await this.fullText(transaction, config, ids, query, limit), weight: FULL_TEXT_WEIGHT });
      if (trigram) {
        // The base's words like the query's (misspelt, inflected), searched as full text.
        const similar = await this.similarWords(transaction, request.knowledgeBaseIds, query);
        if (similar.length > 0) {
          for (const [config, ids] of configs) lists.push({ items: await this.fullText(transaction, config, ids, similar.join(' '), limit), weight: TRIGRAM_WEIGHT });
        }
      }
      const fused = fuseRankings(lists)
        .filter((f) => f.relevance >= (request.threshold ?? 0))
        .slice(0, request.topK);
      return this.passages(transaction, fused);
    });
  }

  /** The bases' text search configurations, each with its bases (usually one configuration). */
  private async configsOf(transaction: Transaction, ids: string[]): Promise<Map<string, string[]>> {
    const rows = await this.db.models.KnowledgeBase.findAll({ where: { id: ids }, attributes: ['id', 'ts_config'], transaction });
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
  private async passages(transaction: Transaction, fused: Array<{ id: string; relevance: number }>): Promise<RetrievedPassage[]> {
    if (fused.length === 0) return [];
    const rows = await this.db.sequelize.query<Omit<RetrievedPassage, 'score'>>(
      `SELECT c.id AS chunk_id, c.knowledge_base_id, c.document_id, d.name AS document, c.heading, c.content
         FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id
        WHERE c.id IN (:ids)`,
      { replacements: { ids: fused.map((f) => f.id) }, type: QueryTypes.SELECT, transaction },
    );
    const byId = new Map(rows.map((r) => [r.chunk_id, r]));
    return fused.flatMap((f) => {
      const row = byId.get(f.id);
      return row ? [{ ...row, score: Math.round(f.relevance * 1e4) / 1e4 }] : [];
    });
  }
}
