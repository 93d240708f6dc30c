/** Groq through its OpenAI-compatible endpoint (GROQ_BASE_URL), with the openai SDK. */
import OpenAI from 'openai';
import { DEFAULT_LLM_MODEL } from '../../../shared/catalog';
import { firstMissing, required } from '../../vendor';
import type { LlmVendor } from '../types';

export const GROQ_DEFAULT_BASE_URL = 'https://api.groq.com/openai/v1';

export const descriptor: LlmVendor = {
  name: 'groq',
  label: 'Groq',
  env: ['GROQ_API_KEY'],
  optionalEnv: ['GROQ_BASE_URL'],
  transport: { kind: 'sdk', why: 'Groq speaks the OpenAI protocol; the openai SDK with its base URL' },
  defaultModel: DEFAULT_LLM_MODEL.groq,
  // Groq's json_schema mode covers a few models only (not the default llama-3.1-8b-instant, which
  // answers 400); tool calls work on all of its tool-use models.
  structuredOutput: 'tool_call',
  missing: (config) => firstMissing(config, ['GROQ_API_KEY']),
  client: (config) =>
    new OpenAI({ apiKey: required(config, 'GROQ_API_KEY'), baseURL: config.GROQ_BASE_URL ?? GROQ_DEFAULT_BASE_URL, maxRetries: 0 }),
};
