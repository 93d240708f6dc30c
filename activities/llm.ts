/**
 * One LLM turn: a streamed chat completion with the call's messages and tools. Provider errors are
 * thrown as retryable failures (the workflow's retry policy backs off, then ends the call with
 * `error`); requests the provider rejects as invalid are not retried.
 */
import { ApplicationFailure } from '@temporalio/activity';
import OpenAI from 'openai';
import type { ActivityDeps } from '.';
import type { LlmTurnRequest, LlmTurnResult } from '../workflows/call-definitions';
import { llmClientFor, LlmNotConfigured, streamChat } from '../src/providers/llm/chat';

export function createLlmActivities({ config }: ActivityDeps) {
  const clients = new Map<string, OpenAI>();
  const clientFor = (provider: string) => {
    if (!clients.has(provider)) clients.set(provider, llmClientFor(provider, config));
    return clients.get(provider)!;
  };
  return {
    async llmTurn(request: LlmTurnRequest): Promise<LlmTurnResult> {
      try {
        return await streamChat(clientFor(request.provider), request);
      } catch (err) {
        if (err instanceof LlmNotConfigured) throw ApplicationFailure.nonRetryable(err.message, 'LlmRequestRejected');
        if (err instanceof OpenAI.APIError && err.status && [400, 401, 403, 404, 422].includes(err.status)) {
          throw ApplicationFailure.nonRetryable(`LLM rejected the request (${err.status}): ${err.message}`, 'LlmRequestRejected');
        }
        throw ApplicationFailure.retryable(`LLM request failed: ${(err as Error).message}`, 'LlmUnavailable');
      }
    },
  };
}
