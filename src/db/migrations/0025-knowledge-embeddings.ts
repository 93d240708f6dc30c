/**
 * Semantic knowledge-base search (docs/knowledge-base.md): each chunk's embedding and the model
 * that made it (vectors of two models are never compared). With pgvector on the server the column
 * is `vector` (its `<=>` cosine distance ranks in C); without it, `real[]`, ranked by a cosine
 * computed in SQL. Detected here, once: `pg_available_extensions` says whether the package is
 * installed, and `CREATE EXTENSION` whether we may use it. Retrieval reads the column's type, so a
 * server that gains pgvector later keeps working on `real[]` until the column is converted.
 * No dimension is fixed (`vector`, not `vector(N)`): it is the configured model's, which can change.
 */
import { QueryTypes, type QueryInterface } from 'sequelize';

/** Whether pgvector is installed on the server and could be created in this database. */
async function ensureVector(qi: QueryInterface): Promise<boolean> {
  const available = await qi.sequelize.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_available_extensions WHERE name = 'vector'", { type: QueryTypes.SELECT });
  if ((available[0]?.n ?? 0) === 0) return false;
  try {
    await qi.sequelize.query('CREATE EXTENSION IF NOT EXISTS vector');
    return true;
  } catch {
    // Installed but not ours to create (no superuser, not trusted): the real[] fallback.
    return false;
  }
}

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const type = (await ensureVector(qi)) ? 'vector' : 'real[]';
  await qi.sequelize.query(`ALTER TABLE knowledge_chunks ADD COLUMN embedding ${type}, ADD COLUMN embedding_model TEXT`);
  // The semantic ranking reads a base's chunks of one model: this narrows it to them.
  await qi.sequelize.query('CREATE INDEX knowledge_chunks_base_model ON knowledge_chunks (knowledge_base_id, embedding_model) WHERE embedding IS NOT NULL');
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP INDEX IF EXISTS knowledge_chunks_base_model');
  await qi.sequelize.query('ALTER TABLE knowledge_chunks DROP COLUMN embedding, DROP COLUMN embedding_model');
}
