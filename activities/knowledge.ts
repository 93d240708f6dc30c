/**
 * The knowledge-document ingestion's activities (workflows/knowledge-workflow.ts). Errors that a
 * retry cannot mend (an unreadable file, a refused URL) are thrown as non-retryable failures with
 * the reason the document will show.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { markFailed } from '../src/knowledge/chunk-store';
import { DocumentUnreadable } from '../src/knowledge/extract';
import { DocumentFetchRefused } from '../src/knowledge/fetch-document';
import { fetchUrlDocument, indexDocument, type IngestDeps } from '../src/knowledge/ingest';
import { outboundGuard } from '../src/security/outbound-guard';
import { createKnowledgeRetriever } from '../src/knowledge/retrieval';
import { embedderFromConfig } from '../src/providers/embeddings';
import { KNOWLEDGE_TOP_K, type RetrievalMethod, type RetrievedPassage } from '../src/shared/knowledge';
import { heartbeating } from './heartbeating';
import type { ActivityDeps } from './index';

function failure(err: unknown): unknown {
  if (err instanceof DocumentUnreadable) return ApplicationFailure.nonRetryable(err.message, 'DocumentUnreadable');
  if (err instanceof DocumentFetchRefused) return ApplicationFailure.nonRetryable(err.message, 'DocumentFetchRefused');
  return err;
}

export function createKnowledgeActivities(deps: ActivityDeps) {
  // One embedder for indexing and searching: chunks and queries are embedded by the same model.
  const embedder = embedderFromConfig(deps.config);
  const retriever = createKnowledgeRetriever(deps.db, embedder, deps.log);
  const ingest: IngestDeps = { db: deps.db, guard: outboundGuard(deps.config), maxDocumentBytes: deps.config.KNOWLEDGE_MAX_DOCUMENT_MB * 1e6, embedder };
  return {
    async knowledgeFetch(input: { documentId: string }): Promise<boolean> {
      try {
        return await heartbeating(fetchUrlDocument(ingest, input.documentId));
      } catch (err) {
        throw failure(err);
      }
    },
    async knowledgeIndex(input: { documentId: string }): Promise<number | null> {
      try {
        return await heartbeating(indexDocument(ingest, input.documentId));
      } catch (err) {
        throw failure(err);
      }
    },
    /** The builtin search_knowledge_base tool of a call (`tool` mode). */
    async searchKnowledge(input: { knowledgeBaseIds: string[]; query: string }): Promise<{ passages: RetrievedPassage[]; ms: number; method: RetrievalMethod; semantic_error?: string }> {
      const started = performance.now();
      // Bounded by this attempt's own deadline (the agent's budget and 5 s): a search past it is
      // cancelled by PostgreSQL rather than holding a connection after Temporal gave up on it.
      const timeoutMs = Context.current().info.startToCloseTimeoutMs;
      const { passages, method, semanticError } = await retriever.search({ knowledgeBaseIds: input.knowledgeBaseIds, query: input.query, topK: KNOWLEDGE_TOP_K, timeoutMs });
      return { passages, ms: Math.round(performance.now() - started), method, ...(semanticError ? { semantic_error: semanticError } : {}) };
    },
    async knowledgeFailed(input: { documentId: string; reason: string }): Promise<void> {
      await markFailed(deps.db, input.documentId, input.reason);
    },
  };
}
