/**
 * Writing a document's ingestion state and chunks. A document's chunks are replaced in one
 * transaction that also marks it `ready`: a search sees the old chunks or the new ones, never a
 * half-written set, and a worker killed mid-write leaves the previous state for the retry.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database';
import type { Chunk } from './chunking';
import { embeddingColumn } from './semantic';
import { vectorLiteral } from './vectors';

/** The chunks' vectors (one per chunk, in order) and the model that made them. */
export interface ChunkEmbeddings {
  model: string;
  vectors: Float32Array[];
}

export async function setProgress(db: Database, documentId: string, stage: string, progress: number): Promise<void> {
  await db.models.KnowledgeDocument.update({ status: 'processing', stage, progress: Math.round(progress), error: null }, { where: { id: documentId } });
}

export async function markFailed(db: Database, documentId: string, reason: string): Promise<void> {
  // Whatever chunks a previous ingestion indexed stay searchable: a failed refresh of a URL does
  // not empty the knowledge base. A first ingestion has none.
  await db.models.KnowledgeDocument.update({ status: 'failed', stage: null, error: reason.slice(0, 1000) }, { where: { id: documentId } });
}

/**
 * Replaces the document's chunks (with their embeddings, when semantic search is on) and marks it
 * ready, in one transaction. False: the document is gone.
 */
export async function replaceChunks(db: Database, documentId: string, chunks: Chunk[], embeddings?: ChunkEmbeddings): Promise<boolean> {
  if (embeddings && embeddings.vectors.length !== chunks.length) throw new Error(`${embeddings.vectors.length} embeddings for ${chunks.length} chunks`);
  const column = embeddings ? await embeddingColumn(db) : null;
  return db.sequelize.transaction(async (transaction) => {
    // Locks the row: two ingestions of one document (a refresh beside a retry) write one at a time.
    const document = await db.models.KnowledgeDocument.findByPk(documentId, { transaction, lock: transaction.LOCK.UPDATE });
    if (!document) return false;
    const base = await db.models.KnowledgeBase.findByPk(document.get('knowledge_base_id') as string, { transaction });
    if (!base) return false;
    await db.sequelize.query('DELETE FROM knowledge_chunks WHERE document_id = :documentId', { replacements: { documentId }, transaction });
    // In batches: one INSERT per 200 chunks keeps the statement's parameters well under PostgreSQL's 65,535.
    for (let start = 0; start < chunks.length; start += 200) {
      const batch = chunks.slice(start, start + 200);
      const values: string[] = [];
      const bind: unknown[] = [];
      batch.forEach((chunk, i) => {
        bind.push(randomUUID(), base.get('id'), documentId, chunk.position, chunk.heading, chunk.content, chunk.tokens, base.get('ts_config'));
        if (embeddings && column) bind.push(vectorLiteral(embeddings.vectors[start + i]!, column), embeddings.model);
        const n = bind.length - (column ? 10 : 8);
        const vector = column ? `, $${n + 9}::${column}, $${n + 10}` : '';
        values.push(`($${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6}, $${n + 7}, $${n + 8}::regconfig${vector})`);
      });
      await db.sequelize.query(
        `INSERT INTO knowledge_chunks (id, knowledge_base_id, document_id, position, heading, content, tokens, ts_config${column ? ', embedding, embedding_model' : ''}) VALUES ${values.join(', ')}`,
        { bind, transaction },
      );
    }
    // The base's vocabulary for trigram matching (retrieval.ts): the words of these chunks,
    // lower-cased and unstemmed (`simple`). Words of deleted documents stay: they only widen a
    // query to words no chunk holds any more.
    await db.sequelize.query(
      `INSERT INTO knowledge_words (knowledge_base_id, word)
       SELECT :baseId, word FROM ts_stat(format('SELECT to_tsvector(''simple'', heading || '' '' || content) FROM knowledge_chunks WHERE document_id = %L', CAST(:documentId AS text)))
       WHERE length(word) BETWEEN 3 AND 64
       ON CONFLICT DO NOTHING`,
      { replacements: { baseId: base.get('id'), documentId }, transaction },
    );
    await document.update({ status: 'ready', stage: null, progress: 100, error: null, chunk_count: chunks.length, ingested_at: new Date() }, { transaction });
    return true;
  });
}
