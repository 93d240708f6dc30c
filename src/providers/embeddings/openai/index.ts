/**
 * Embeddings through the official openai SDK with a base URL: the hosted API and every server of
 * the same `POST /v1/embeddings` wire format (Azure OpenAI's v1 endpoint, Ollama, TEI, vLLM).
 */
import type { EmbeddingsVendor } from '../types';
import { OpenAIEmbedder } from './client';

export const descriptor: EmbeddingsVendor = {
  name: 'openai',
  transport: { kind: 'sdk', why: 'the openai SDK takes a base URL, so one adapter serves every OpenAI-compatible embeddings server' },
  create: (settings) => new OpenAIEmbedder(settings),
};
