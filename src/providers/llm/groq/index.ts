/** Groq through its OpenAI-compatible endpoint (GROQ_BASE_URL), with the openai SDK. */
import OpenAI from 'openai';
import { configValues, optionalString } from '../../../shared/config-fields';
import { z } from 'zod';
import { firstMissing, required } from '../../vendor';
import type { LlmVendor } from '../types';

export const GROQ_DEFAULT_BASE_URL = 'https://api.groq.com/openai/v1';

const GROQ_CONFIG = {
  GROQ_API_KEY: optionalString,
  GROQ_BASE_URL: z.url().default(GROQ_DEFAULT_BASE_URL),
};

export const descriptor: LlmVendor = {
  name: 'groq',
  label: 'Groq',
  env: ['GROQ_API_KEY'],
  optionalEnv: ['GROQ_BASE_URL'],
  config: GROQ_CONFIG,
  transport: { kind: 'sdk', why: 'Groq speaks the OpenAI protocol; the openai SDK with its base URL' },
  // The fast 8B Llama of Groq's production models; groq-sdk 1.6.0 types the model as a plain
  // string, so this is not checked against a list (console.groq.com/docs/deprecations to watch).
  defaultModel: 'llama-3.1-8b-instant',
  // Groq's json_schema mode covers a few models only (not the default llama-3.1-8b-instant, which
  // answers 400); tool calls work on all of its tool-use models.
  structuredOutput: 'tool_call',
  missing: (config) => firstMissing(config, ['GROQ_API_KEY']),
  client: (config, options) =>
    new OpenAI({
      apiKey: required(config, 'GROQ_API_KEY'),
      baseURL: configValues(GROQ_CONFIG, config).GROQ_BASE_URL ?? GROQ_DEFAULT_BASE_URL,
      maxRetries: options?.maxRetries ?? 0,
      ...(options?.timeoutMs ? { timeout: options.timeoutMs } : {}),
    }),
};
