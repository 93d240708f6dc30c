/**
 * The embeddings provider's keys (docs/knowledge-base.md, "Semantic search"), whichever adapter
 * the registry names: today any server speaking the `POST /v1/embeddings` wire format (the hosted
 * API, Azure's v1 endpoint, Ollama, Hugging Face TEI, vLLM, a test fake). Semantic search is on when EMBEDDINGS_MODEL is set; without it retrieval is
 * lexical only, exactly as before. Validated at start-up with the rest (src/config.ts).
 */
import { z } from 'zod';
import { optionalString, optionalUrl } from '../../shared/config-fields';

export const EMBEDDINGS_CONFIG = {
  // The server's base URL, up to and including /v1 (default: api.openai.com's).
  EMBEDDINGS_BASE_URL: optionalUrl({ regex: /^https?:\/\//i, message: 'must be an http:// or https:// URL, e.g. http://localhost:11434/v1' }),
  EMBEDDINGS_API_KEY: optionalString,
  // The model, e.g. text-embedding-3-small, nomic-embed-text. Unset: no semantic search.
  EMBEDDINGS_MODEL: optionalString,
  // Asked of models that can shorten their vectors (OpenAI's text-embedding-3-*); every answer must
  // have this length. Unset: the model's own length.
  EMBEDDINGS_DIMENSIONS: optionalString.transform((v) => (v === undefined ? undefined : Number(v))).pipe(z.number('must be a number').int('must be an integer').min(1).max(16_000).optional()),
  // Chunks embedded per request while indexing (OpenAI takes up to 2,048 inputs; local servers less).
  EMBEDDINGS_BATCH_SIZE: z.coerce.number().int().min(1).max(2048).default(64),
  // The longest a search waits for the query's vector and the vector ranking; past it the search
  // answers its lexical results alone (never later than a call's knowledge_timeout_ms, either).
  EMBEDDINGS_TIMEOUT_MS: z.coerce.number().int().min(10).max(60_000).default(2000),
  // Below this cosine similarity a chunk is not a semantic candidate: a vector ranking always has a
  // nearest chunk, even to "hello". Model-dependent (docs/knowledge-base.md).
  EMBEDDINGS_MIN_SIMILARITY: z.coerce.number().min(-1).max(1).default(0.3),
};

export type EmbeddingsSettings = {
  baseUrl?: string;
  apiKey?: string;
  model: string;
  dimensions?: number;
  batchSize: number;
  timeoutMs: number;
  minSimilarity: number;
};

type EmbeddingsConfigValues = { [K in keyof typeof EMBEDDINGS_CONFIG]?: z.output<(typeof EMBEDDINGS_CONFIG)[K]> };

/** Why these settings cannot work (a key or URL without a model), or null. */
export function embeddingsConfigProblem(config: EmbeddingsConfigValues): string | null {
  if (!config.EMBEDDINGS_MODEL && (config.EMBEDDINGS_BASE_URL || config.EMBEDDINGS_API_KEY || config.EMBEDDINGS_DIMENSIONS)) {
    return 'EMBEDDINGS_MODEL: required when EMBEDDINGS_BASE_URL, EMBEDDINGS_API_KEY or EMBEDDINGS_DIMENSIONS is set (the model the chunks are embedded with)';
  }
  if (config.EMBEDDINGS_MODEL && !config.EMBEDDINGS_BASE_URL && !config.EMBEDDINGS_API_KEY) {
    return 'EMBEDDINGS_API_KEY: required when EMBEDDINGS_BASE_URL is unset (the default server, the hosted API, needs a key; a local server set by EMBEDDINGS_BASE_URL does not)';
  }
  return null;
}

/** The embeddings settings of a configuration, or null when semantic search is off. */
export function embeddingsSettings(config: EmbeddingsConfigValues): EmbeddingsSettings | null {
  if (!config.EMBEDDINGS_MODEL) return null;
  return {
    ...(config.EMBEDDINGS_BASE_URL ? { baseUrl: config.EMBEDDINGS_BASE_URL } : {}),
    ...(config.EMBEDDINGS_API_KEY ? { apiKey: config.EMBEDDINGS_API_KEY } : {}),
    model: config.EMBEDDINGS_MODEL,
    ...(config.EMBEDDINGS_DIMENSIONS ? { dimensions: config.EMBEDDINGS_DIMENSIONS } : {}),
    batchSize: config.EMBEDDINGS_BATCH_SIZE ?? 64,
    timeoutMs: config.EMBEDDINGS_TIMEOUT_MS ?? 2000,
    minSimilarity: config.EMBEDDINGS_MIN_SIMILARITY ?? 0.3,
  };
}
