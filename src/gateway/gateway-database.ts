/**
 * The gateway's own small connection pool to PostgreSQL: its presence row (admission/presence.ts)
 * and the `in_progress` write at stream start (answered-calls.ts). Short timeouts: a stuck
 * database must never stall the gateway's calls.
 */
import { Pool } from 'pg';
import type { Logger } from '../shared/logger';
import { connectDatabase } from '../db/database';
import { createKnowledgeRetriever, type KnowledgeRetriever } from '../knowledge/retrieval';
import type { Embedder } from '../providers/embeddings';

export function openGatewayDatabase(databaseUrl: string, log: Logger): Pool {
  // One presence row a second plus one short UPDATE per call start: three connections are plenty.
  const pool = new Pool({ connectionString: databaseUrl, max: 3, connectionTimeoutMillis: 2000, query_timeout: 2000 });
  pool.on('error', (err) => log.warn('gateway database connection lost', { error: err.message }));
  return pool;
}

/**
 * The knowledge-base search of `auto` turns (docs/knowledge-base.md), through the same retriever
 * as text calls. Its own small pool: a slow search must not hold the presence writes' connections.
 * Connects on first use, so a gateway whose calls use no knowledge base opens nothing. With an
 * embedder (EMBEDDINGS_MODEL set) it searches hybrid, as the worker does.
 */
export function openKnowledgeSearch(databaseUrl: string, embedder: Embedder | null = null, log?: Logger): { retriever: KnowledgeRetriever; close(): Promise<void> } {
  const db = connectDatabase(databaseUrl, { poolMax: 4 });
  return { retriever: createKnowledgeRetriever(db, embedder, log), close: () => db.close() };
}
