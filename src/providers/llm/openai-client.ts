/**
 * The OpenAI SDK client for OpenAI and OpenAI-compatible servers (OPENAI_BASE_URL, e.g. a local
 * model server or the test fake). Returns undefined when no LLM is configured, so callers can
 * answer 503 instead of failing deep inside a request.
 */
import OpenAI from 'openai';
import type { Config } from '../../config';

export function createOpenAIClient(config: Pick<Config, 'OPENAI_API_KEY' | 'OPENAI_BASE_URL'>, options: { maxRetries?: number; timeoutMs?: number } = {}): OpenAI | undefined {
  if (!config.OPENAI_API_KEY && !config.OPENAI_BASE_URL) return undefined;
  return new OpenAI({
    apiKey: config.OPENAI_API_KEY ?? 'not-needed-for-local-servers',
    ...(config.OPENAI_BASE_URL ? { baseURL: config.OPENAI_BASE_URL } : {}),
    maxRetries: options.maxRetries ?? 0,
    timeout: options.timeoutMs ?? 30_000,
  });
}
