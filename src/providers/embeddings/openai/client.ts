/**
 * Embeddings from any OpenAI-compatible `POST /v1/embeddings` (OpenAI, Azure OpenAI's v1
 * endpoint, Ollama, TEI, vLLM) through the official openai SDK with a base URL. No retries here:
 * indexing is a Temporal activity that retries itself, and a search has a budget to keep.
 */
import OpenAI from 'openai';
import { normalise } from '../../../knowledge/vectors';
import type { EmbeddingsSettings } from '../settings';
import type { Embedder } from '../types';

export class EmbeddingsError extends Error {}

export class OpenAIEmbedder implements Embedder {
  readonly model: string;
  private readonly client: OpenAI;

  constructor(readonly settings: EmbeddingsSettings) {
    this.model = settings.model;
    this.client = new OpenAI({
      // Local servers (Ollama, TEI) take no key; the SDK insists on one.
      apiKey: settings.apiKey ?? 'not-needed-for-local-servers',
      ...(settings.baseUrl ? { baseURL: settings.baseUrl } : {}),
      maxRetries: 0,
      timeout: settings.timeoutMs,
    });
  }

  async embed(texts: string[], options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.settings.batchSize) {
      const batch = texts.slice(start, start + this.settings.batchSize);
      const response = await this.client.embeddings.create(
        {
          model: this.model,
          input: batch,
          // `float`, said outright: the SDK otherwise asks for base64, which some compatible servers ignore.
          encoding_format: 'float',
          ...(this.settings.dimensions ? { dimensions: this.settings.dimensions } : {}),
        },
        { ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}), ...(options.signal ? { signal: options.signal } : {}) },
      );
      const data = [...(response.data ?? [])].sort((a, b) => a.index - b.index);
      if (data.length !== batch.length) throw new EmbeddingsError(`the embeddings server answered ${data.length} vectors for ${batch.length} inputs`);
      for (const item of data) out.push(this.checked(item.embedding, out[0]?.length));
    }
    return out;
  }

  private checked(embedding: unknown, length: number | undefined): Float32Array {
    if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((v) => typeof v === 'number' && Number.isFinite(v))) {
      throw new EmbeddingsError('the embeddings server answered something that is not a vector of numbers');
    }
    const expected = this.settings.dimensions ?? length;
    if (expected !== undefined && embedding.length !== expected) {
      throw new EmbeddingsError(`the embeddings server answered a vector of ${embedding.length} dimensions, not ${expected} (EMBEDDINGS_DIMENSIONS)`);
    }
    return normalise(embedding as number[]);
  }
}
