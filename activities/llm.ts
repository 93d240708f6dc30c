/**
 * One LLM turn of a text call: a streamed chat completion with the call's messages and tools.
 * Provider errors are thrown as retryable failures (the workflow's retry policy backs off, then
 * ends the call with `error`); requests the provider rejects as invalid are not retried. It
 * heartbeats, so a worker that dies mid-turn is retried within seconds, not at the minute's timeout.
 */
import type { ActivityDeps } from '.';
import type { LlmTurnRequest, LlmTurnResult } from '../workflows/call-definitions';
import { countProviderError } from '../src/observability/metrics';
import { streamChat } from '../src/providers/llm/chat';
import { llmClients, llmFailure } from '../src/providers/llm/llm-activity-support';
import { heartbeating } from './heartbeating';
import { createKnowledgeRetriever } from '../src/knowledge/retrieval';
import { embedderFromConfig } from '../src/providers/embeddings';
import { withKnowledge } from '../src/knowledge/turn-knowledge';

export function createLlmActivities({ config, db, log }: ActivityDeps) {
  const clientFor = llmClients(config);
  const retriever = createKnowledgeRetriever(db, embedderFromConfig(config), log);
  return {
    async llmTurn(request: LlmTurnRequest): Promise<LlmTurnResult> {
      // Retrieval (auto knowledge mode) never fails the turn: it is skipped with an event instead.
      const { messages, knowledge } = await withKnowledge(retriever, request);
      try {
        const result = await heartbeating(streamChat(clientFor(request.provider), { ...request, messages }));
        return knowledge ? { ...result, knowledge } : result;
      } catch (err) {
        countProviderError('llm', request.provider);
        throw llmFailure(err);
      }
    },
  };
}
