/**
 * Knowledge bases (docs/knowledge-base.md): the base, its documents (an upload's bytes or a URL,
 * with the ingestion's status and progress) and the chunks retrieval ranks. Each chunk carries a
 * generated tsvector in its base's text search configuration (heading weighted above the text);
 * the base's words are kept once each with, when the server has pg_trgm, a trigram index for
 * names, spelling slips and scripts PostgreSQL does not stem. Agents and flow nodes name the bases they answer from.
 */
import { DataTypes, type QueryInterface } from 'sequelize';

/** Whether pg_trgm is (or could now be) installed; a server without the contrib module says no. */
async function ensureTrigram(qi: QueryInterface): Promise<boolean> {
  try {
    await qi.sequelize.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    return true;
  } catch {
    // No contrib package, or no right to create extensions: lexical search without trigrams.
    return false;
  }
}

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable('knowledge_bases', {
    id: { type: DataTypes.UUID, primaryKey: true },
    name: { type: DataTypes.TEXT, allowNull: false, unique: true },
    description: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
    language: { type: DataTypes.TEXT, allowNull: false },
    // The text search configuration the language resolved to on this server (or `simple`).
    ts_config: { type: DataTypes.TEXT, allowNull: false },
    owner_id: { type: DataTypes.UUID, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await qi.createTable('knowledge_documents', {
    id: { type: DataTypes.UUID, primaryKey: true },
    knowledge_base_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'knowledge_bases', key: 'id' }, onDelete: 'CASCADE' },
    name: { type: DataTypes.TEXT, allowNull: false },
    source: { type: DataTypes.TEXT, allowNull: false }, // upload | url
    url: { type: DataTypes.TEXT, allowNull: true },
    kind: { type: DataTypes.TEXT, allowNull: true }, // pdf, docx, … (a URL's is known once fetched)
    // An upload's bytes, or a URL's last fetched answer: ingestion reads them from here, so a
    // retried step or a re-index never needs the client again.
    content: { type: DataTypes.BLOB, allowNull: true },
    size_bytes: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    status: { type: DataTypes.TEXT, allowNull: false }, // processing | ready | failed
    progress: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    stage: { type: DataTypes.TEXT, allowNull: true },
    error: { type: DataTypes.TEXT, allowNull: true },
    chunk_count: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    refresh_hours: { type: DataTypes.INTEGER, allowNull: true },
    ingested_at: { type: DataTypes.DATE, allowNull: true },
    owner_id: { type: DataTypes.UUID, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await qi.addIndex('knowledge_documents', ['knowledge_base_id', 'created_at'], { name: 'knowledge_documents_base' });
  await qi.sequelize.query(`
    CREATE TABLE knowledge_chunks (
      id UUID PRIMARY KEY,
      knowledge_base_id UUID NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
      document_id UUID NOT NULL REFERENCES knowledge_documents (id) ON DELETE CASCADE,
      position INTEGER NOT NULL,
      heading TEXT NOT NULL,
      content TEXT NOT NULL,
      tokens INTEGER NOT NULL,
      ts_config REGCONFIG NOT NULL,
      tsv TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector(ts_config, heading), 'A') || setweight(to_tsvector(ts_config, content), 'B')
      ) STORED,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      UNIQUE (document_id, position)
    )`);
  await qi.sequelize.query('CREATE INDEX knowledge_chunks_tsv ON knowledge_chunks USING GIN (tsv)');
  await qi.sequelize.query('CREATE INDEX knowledge_chunks_base ON knowledge_chunks (knowledge_base_id)');
  // Every word of a base's chunks, once: trigram similarity runs on these short strings (a
  // misspelt or inflected query word → the base's words like it), never on whole chunks, which
  // cost a quarter of a millisecond each (a seq scan of 1,000 chunks took 260 ms).
  await qi.sequelize.query(`
    CREATE TABLE knowledge_words (
      knowledge_base_id UUID NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
      word TEXT NOT NULL,
      PRIMARY KEY (knowledge_base_id, word)
    )`);
  if (await ensureTrigram(qi)) {
    await qi.sequelize.query('CREATE INDEX knowledge_words_trgm ON knowledge_words USING GIN (word gin_trgm_ops)');
  }
  for (const table of ['agents', 'flow_nodes']) {
    await qi.addColumn(table, 'knowledge_base_ids', { type: DataTypes.JSONB, allowNull: false, defaultValue: [] });
    await qi.addColumn(table, 'knowledge_mode', { type: DataTypes.TEXT, allowNull: false, defaultValue: 'auto' });
  }
  await qi.addColumn('agents', 'knowledge_timeout_ms', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 250 });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('agents', 'knowledge_timeout_ms');
  for (const table of ['agents', 'flow_nodes']) {
    await qi.removeColumn(table, 'knowledge_mode');
    await qi.removeColumn(table, 'knowledge_base_ids');
  }
  await qi.dropTable('knowledge_words');
  await qi.dropTable('knowledge_chunks');
  await qi.dropTable('knowledge_documents');
  await qi.dropTable('knowledge_bases');
}
