/**
 * What semantic search asks of an embeddings adapter (docs/knowledge-base.md, "Semantic search"),
 * and what an adapter's folder exports for the registry (registry.ts).
 */
import type { EmbeddingsSettings } from './settings';

export interface Embedder {
  /** The model, stored beside each chunk's vector: vectors of different models are never compared. */
  readonly model: string;
  readonly settings: EmbeddingsSettings;
  /** One L2-normalised vector per text, in order; `batchSize` texts per request. */
  embed(texts: string[], options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<Float32Array[]>;
}

export interface EmbeddingsVendor {
  readonly name: string;
  /** Why the adapter uses the vendor SDK or speaks the wire protocol itself. */
  readonly transport: { kind: 'sdk' | 'wire'; why: string };
  create(settings: EmbeddingsSettings): Embedder;
}
