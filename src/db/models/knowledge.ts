import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import { modelOptions, nullableText, requiredText, uuidPk, type Timestamps } from './common';
import type { DocumentKind } from '../../knowledge/document-kinds';

export interface KnowledgeBaseRow extends Timestamps {
  id: string;
  /** Unique: what a person picks in an agent's form. */
  name: string;
  description: string;
  /** BCP 47 (`en`, `hi-IN`): picks the text search configuration. */
  language: string;
  /** The PostgreSQL text search configuration the language resolved to (`english`, `simple`). */
  ts_config: string;
  owner_id: string | null;
}

export type DocumentStatus = 'processing' | 'ready' | 'failed';

export interface KnowledgeDocumentRow extends Timestamps {
  id: string;
  knowledge_base_id: string;
  name: string;
  source: 'upload' | 'url';
  url: string | null;
  kind: DocumentKind | null;
  content: Buffer | null;
  size_bytes: number;
  status: DocumentStatus;
  /** 0–100 while processing. */
  progress: number;
  /** What ingestion is doing (`fetching`, `extracting`, `indexing`, `embedding`). */
  stage: string | null;
  error: string | null;
  chunk_count: number;
  /** URL documents: re-fetched every this many hours (a Temporal schedule); null: never. */
  refresh_hours: number | null;
  ingested_at: Date | null;
  owner_id: string | null;
}

/** Chunks are written and read with SQL of their own (src/knowledge/chunk-store.ts, retrieval). */
export interface KnowledgeChunkRow {
  id: string;
  knowledge_base_id: string;
  document_id: string;
  position: number;
  heading: string;
  content: string;
  tokens: number;
}

export type KnowledgeBaseModel = ModelStatic<Model<KnowledgeBaseRow, Partial<KnowledgeBaseRow>>>;
export type KnowledgeDocumentModel = ModelStatic<Model<KnowledgeDocumentRow, Partial<KnowledgeDocumentRow>>>;

export function defineKnowledgeModels(sequelize: Sequelize) {
  const KnowledgeBase: KnowledgeBaseModel = sequelize.define(
    'KnowledgeBase',
    {
      id: uuidPk(),
      name: requiredText(),
      description: { ...requiredText(), defaultValue: '' },
      language: requiredText(),
      ts_config: requiredText(),
      owner_id: { type: DataTypes.UUID, allowNull: true },
    },
    { ...modelOptions, tableName: 'knowledge_bases' },
  );
  const KnowledgeDocument: KnowledgeDocumentModel = sequelize.define(
    'KnowledgeDocument',
    {
      id: uuidPk(),
      knowledge_base_id: { type: DataTypes.UUID, allowNull: false },
      name: requiredText(),
      source: requiredText(),
      url: nullableText(),
      kind: nullableText(),
      content: { type: DataTypes.BLOB, allowNull: true },
      size_bytes: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      status: requiredText(),
      progress: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      stage: nullableText(),
      error: nullableText(),
      chunk_count: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      refresh_hours: { type: DataTypes.INTEGER, allowNull: true },
      ingested_at: { type: DataTypes.DATE, allowNull: true },
      owner_id: { type: DataTypes.UUID, allowNull: true },
    },
    { ...modelOptions, tableName: 'knowledge_documents' },
  );
  return { KnowledgeBase, KnowledgeDocument };
}
