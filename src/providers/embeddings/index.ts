/**
 * Embeddings for semantic knowledge-base search (docs/knowledge-base.md). One protocol serves every
 * vendor — OpenAI's `POST /v1/embeddings`, which Azure OpenAI, Ollama, TEI and vLLM speak too — so
 * there is one adapter (openai/) rather than a registry; a vendor with another wire format would
 * be a folder beside it implementing `Embedder`.
 */
import type { ProviderConfig } from '../vendor';
import { createEmbedder, type Embedder } from './openai/client';
import { EMBEDDINGS_CONFIG, embeddingsSettings } from './openai/config';
import { configValues } from '../../shared/config-fields';

export type { Embedder } from './openai/client';
export { EMBEDDINGS_CONFIG, embeddingsConfigProblem, embeddingsSettings, type EmbeddingsSettings } from './openai/config';

/** The configured embedder, or null when EMBEDDINGS_MODEL is unset (lexical search only). */
export function embedderFromConfig(config: ProviderConfig): Embedder | null {
  return createEmbedder(embeddingsSettings(configValues(EMBEDDINGS_CONFIG, config)));
}
