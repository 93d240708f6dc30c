/** The API form of knowledge bases and documents. */
import { QueryTypes } from 'sequelize';
import type { Database } from '../../db/database';
import type { KnowledgeBaseRow, KnowledgeDocumentRow } from '../../db/models';
import { apiTimestamp } from '../../shared/time';

/** Each base's document and chunk counts, in one query. */
async function counts(db: Database, ids: string[]): Promise<Map<string, { documents: number; chunks: number }>> {
  if (ids.length === 0) return new Map();
  const rows = await db.sequelize.query<{ id: string; documents: number; chunks: number }>(
    `SELECT d.knowledge_base_id AS id, count(*)::int AS documents, coalesce(sum(d.chunk_count), 0)::int AS chunks
       FROM knowledge_documents d WHERE d.knowledge_base_id IN (:ids) GROUP BY d.knowledge_base_id`,
    { replacements: { ids }, type: QueryTypes.SELECT },
  );
  return new Map(rows.map((r) => [r.id, r]));
}

export async function knowledgeBasesJson(db: Database, rows: KnowledgeBaseRow[]) {
  const byId = await counts(db, rows.map((r) => r.id));
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    language: row.language,
    text_search_config: row.ts_config,
    document_count: byId.get(row.id)?.documents ?? 0,
    chunk_count: byId.get(row.id)?.chunks ?? 0,
    created_at: apiTimestamp(row.created_at)!,
    updated_at: apiTimestamp(row.updated_at)!,
    owner_id: row.owner_id ?? null,
  }));
}

export function knowledgeDocumentJson(row: KnowledgeDocumentRow) {
  return {
    id: row.id,
    knowledge_base_id: row.knowledge_base_id,
    name: row.name,
    source: row.source,
    url: row.url,
    kind: row.kind,
    size_bytes: row.size_bytes,
    status: row.status,
    progress: row.progress,
    stage: row.stage,
    error: row.error,
    chunk_count: row.chunk_count,
    refresh_hours: row.refresh_hours,
    ingested_at: apiTimestamp(row.ingested_at),
    created_at: apiTimestamp(row.created_at)!,
    updated_at: apiTimestamp(row.updated_at)!,
  };
}

/** Document columns without the content (bytes never leave the database through the API). */
export const DOCUMENT_ATTRIBUTES = ['id', 'knowledge_base_id', 'name', 'source', 'url', 'kind', 'size_bytes', 'status', 'progress', 'stage', 'error', 'chunk_count', 'refresh_hours', 'ingested_at', 'owner_id', 'created_at', 'updated_at'];
