/**
 * OpenAI, and any OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp, a test fake)
 * through OPENAI_BASE_URL. The official SDK: it streams as fast as raw SSE and takes a base URL.
 */
import { configValues } from '../../../shared/config-fields';
import type { LlmVendor } from '../types';
import { createOpenAIClient } from './client';
import { OPENAI_CONFIG } from './config';

const MISSING = 'OPENAI_API_KEY is not set (nor OPENAI_BASE_URL for an OpenAI-compatible server)';

export const descriptor: LlmVendor = {
  name: 'openai',
  label: 'OpenAI',
  env: ['OPENAI_API_KEY'],
  optionalEnv: ['OPENAI_BASE_URL'],
  config: OPENAI_CONFIG,
  transport: { kind: 'sdk', why: 'the openai SDK streams SSE chunks as they arrive and takes a base URL' },
  // A small, cheap model of the official openai SDK's ChatModel list (openai 6.49.0).
  defaultModel: 'gpt-4o-mini',
  structuredOutput: 'json_schema',
  // A local OpenAI-compatible server needs no key: a base URL alone is enough.
  missing(config) {
    const env = configValues(OPENAI_CONFIG, config);
    return env.OPENAI_API_KEY || env.OPENAI_BASE_URL ? null : MISSING;
  },
  client(config, options) {
    const client = createOpenAIClient(config, options);
    if (!client) throw new Error(MISSING);
    return client;
  },
};
