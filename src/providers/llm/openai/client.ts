/**
 * The OpenAI SDK client for OpenAI and OpenAI-compatible servers (OPENAI_BASE_URL, e.g. a local
 * model server or the test fake). Returns undefined when neither a key nor a base URL is set, so
 * callers can answer 503 instead of failing deep inside a request.
 */
import OpenAI from 'openai';
import { configValues } from '../../../shared/config-fields';
import type { ProviderConfig } from '../../vendor';
import { OPENAI_CONFIG } from './config';

export function createOpenAIClient(config: ProviderConfig, options: { maxRetries?: number; timeoutMs?: number } = {}): OpenAI | undefined {
  const env = configValues(OPENAI_CONFIG, config);
  if (!env.OPENAI_API_KEY && !env.OPENAI_BASE_URL) return undefined;
  return new OpenAI({
    apiKey: env.OPENAI_API_KEY ?? 'not-needed-for-local-servers',
    ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : {}),
    maxRetries: options.maxRetries ?? 0,
    timeout: options.timeoutMs ?? 30_000,
  });
}
