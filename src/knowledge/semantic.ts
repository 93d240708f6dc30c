/**
 * The semantic list of hybrid retrieval (docs/knowledge-base.md, "Semantic search"): a base's
 * chunks ranked by the cosine similarity of their embedding to the query's. The column is pgvector's
 * `vector` when the migration found the extension (its `<=>` cosine distance, computed in C), else
 * `real[]` with the cosine computed in SQL (vectors are stored L2-normalised, so it is a dot
 * product). Either way an exact scan of the base's chunks of the configured model: no ANN index,
 * whose dimension would have to be fixed in the schema.
 */
import { QueryTypes } from 'sequelize';
import type { Database } from '../db/database';
import type { Ranked } from './ranking';
import { vectorLiteral } from './vectors';
import { bounded } from './bounded-sql';

export type EmbeddingColumn = 'vector' | 'real[]';

const columns = new WeakMap<Database, Promise<EmbeddingColumn>>();

/** The type of knowledge_chunks.embedding on this server, as the migration chose it (asked once). */
export function embeddingColumn(db: Database): Promise<EmbeddingColumn> {
  let column = columns.get(db);
  if (!column) {
    column = db.sequelize
      .query<{ type: string }>(
        "SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = 'knowledge_chunks'::regclass AND attname = 'embedding' AND NOT attisdropped",
        { type: QueryTypes.SELECT },
      )
      .then((rows) => (rows[0]?.type.startsWith('vector') ? 'vector' : 'real[]'));
    column.catch(() => columns.delete(db));
    columns.set(db, column);
  }
  return column;
}

export interface SemanticQuery {
  knowledgeBaseIds: string[];
  model: string;
  vector: Float32Array;
  limit: number;
  /** Chunks less similar than this are no candidates. */
  minSimilarity: number;
}

/** The chunks most like the query vector, best first; relevance is the cosine similarity (clamped to 0–1). */
/** `timeoutMs`: the statement's budget (bounded-sql.ts). */
export async function semanticRanking(db: Database, column: EmbeddingColumn, q: SemanticQuery, timeoutMs?: number): Promise<Ranked[]> {
  const replacements = { ids: q.knowledgeBaseIds, model: q.model, dims: q.vector.length, vector: vectorLiteral(q.vector, column), limit: q.limit, min: q.minSimilarity };
  const sql =
    column === 'vector'
      ? `SELECT id, relevance FROM (
           SELECT c.id, 1 - (c.embedding <=> CAST(:vector AS vector)) AS relevance
             FROM knowledge_chunks c
            WHERE c.knowledge_base_id IN (:ids) AND c.embedding_model = :model AND vector_dims(c.embedding) = :dims
            ORDER BY c.embedding <=> CAST(:vector AS vector), c.id LIMIT :limit) s
          WHERE relevance >= :min`
      : `SELECT id, relevance FROM (
           SELECT c.id, (SELECT sum(a * b) FROM unnest(c.embedding, CAST(:vector AS real[])) AS t(a, b)) AS relevance
             FROM knowledge_chunks c
            WHERE c.knowledge_base_id IN (:ids) AND c.embedding_model = :model AND cardinality(c.embedding) = :dims) s
          WHERE relevance >= :min
          ORDER BY relevance DESC, id LIMIT :limit`;
  const rows = await db.sequelize.query<{ id: string; relevance: number }>(bounded(sql, timeoutMs), { replacements, type: QueryTypes.SELECT });
  return rows.map((r) => ({ id: r.id, relevance: Math.min(1, Math.max(0, Number(r.relevance))) }));
}
