/**
 * OpenAI, and any OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp, a test fake)
 * through OPENAI_BASE_URL. The official SDK: it streams as fast as raw SSE and takes a base URL.
 */
import { DEFAULT_LLM_MODEL } from '../../../shared/catalog';
import { createOpenAIClient } from '../openai-client';
import type { LlmVendor } from '../types';

const MISSING = 'OPENAI_API_KEY is not set (nor OPENAI_BASE_URL for an OpenAI-compatible server)';

export const descriptor: LlmVendor = {
  name: 'openai',
  label: 'OpenAI',
  env: ['OPENAI_API_KEY'],
  optionalEnv: ['OPENAI_BASE_URL'],
  transport: { kind: 'sdk', why: 'the openai SDK streams SSE chunks as they arrive and takes a base URL' },
  defaultModel: DEFAULT_LLM_MODEL.openai,
  structuredOutput: 'json_schema',
  // A local OpenAI-compatible server needs no key: a base URL alone is enough.
  missing: (config) => (config.OPENAI_API_KEY || config.OPENAI_BASE_URL ? null : MISSING),
  client(config) {
    const client = createOpenAIClient({ OPENAI_API_KEY: config.OPENAI_API_KEY, OPENAI_BASE_URL: config.OPENAI_BASE_URL });
    if (!client) throw new Error(MISSING);
    return client;
  },
};
