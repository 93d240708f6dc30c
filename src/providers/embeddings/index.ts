/**
 * Embeddings for semantic knowledge-base search (docs/knowledge-base.md): the configured embedder,
 * or null when EMBEDDINGS_MODEL is unset (lexical search only).
 */
import { configValues } from '../../shared/config-fields';
import type { ProviderConfig } from '../vendor';
import { EMBEDDINGS_VENDOR } from './registry';
import { EMBEDDINGS_CONFIG, embeddingsSettings } from './settings';
import type { Embedder } from './types';

export type { Embedder, EmbeddingsVendor } from './types';
export { EMBEDDINGS_CONFIG, embeddingsConfigProblem, embeddingsSettings, type EmbeddingsSettings } from './settings';

export function embedderFromConfig(config: ProviderConfig): Embedder | null {
  const settings = embeddingsSettings(configValues(EMBEDDINGS_CONFIG, config));
  return settings ? EMBEDDINGS_VENDOR.create(settings) : null;
}
