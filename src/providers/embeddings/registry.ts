/**
 * The embeddings adapter of this build (docs/knowledge-base.md, "Semantic search"). One wire format
 * serves every supported server, so there is one adapter, configured by the EMBEDDINGS_* keys
 * (settings.ts); a vendor with another format would be a folder beside it and a choice here.
 */
import { descriptor as openai } from './openai';
import type { EmbeddingsVendor } from './types';

export const EMBEDDINGS_VENDOR: EmbeddingsVendor = openai;
