/**
 * What both LLM-calling activities share (the worker's text turns and the gateway's voice turns):
 * one SDK client per provider, and how an LLM error maps onto the workflow's retry policy.
 */
import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import type { Config } from '../../config';
import { llmClientFor, LlmNotConfigured } from './chat';

/** Clients are created on first use and kept: connections stay warm between turns. */
export function llmClients(config: Config): (provider: string) => OpenAI {
  const clients = new Map<string, OpenAI>();
  return (provider) => {
    let client = clients.get(provider);
    if (!client) {
      client = llmClientFor(provider, config);
      clients.set(provider, client);
    }
    return client;
  };
}

/** Bad requests fail at once (`LlmRequestRejected`); anything else is retried (`LlmUnavailable`). */
export function llmFailure(err: unknown): ApplicationFailure {
  if (err instanceof LlmNotConfigured) return ApplicationFailure.nonRetryable(err.message, 'LlmRequestRejected');
  if (err instanceof OpenAI.APIError && err.status && [400, 401, 403, 404, 422].includes(err.status)) {
    return ApplicationFailure.nonRetryable(`LLM rejected the request (${err.status}): ${err.message}`, 'LlmRequestRejected');
  }
  return ApplicationFailure.retryable(`LLM request failed: ${(err as Error).message}`, 'LlmUnavailable');
}
