/**
 * One document's ingestion (docs/knowledge-base.md): fetch (URL documents) → extract, chunk and
 * index. Not a call: it runs on the worker's queue beside them, each step a retried activity that
 * reads and writes PostgreSQL only. A document that cannot be read (a corrupt PDF, a 404) fails
 * at once with its reason; other errors are retried, then fail the document with the last one.
 * The document is never half-indexed: its chunks are replaced in one transaction.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { createKnowledgeActivities } from '../activities/knowledge';
import type { KnowledgeIngestInput, KnowledgeIngestOutcome } from './knowledge-definitions';

type KnowledgeActivities = ReturnType<typeof createKnowledgeActivities>;

// Heartbeats: a worker killed mid-step is noticed within seconds and the step runs again elsewhere.
const { knowledgeFetch, knowledgeIndex } = proxyActivities<KnowledgeActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '2s', maximumInterval: '30s', maximumAttempts: 4, nonRetryableErrorTypes: ['DocumentUnreadable', 'DocumentFetchRefused'] },
});
const { knowledgeFailed } = proxyActivities<KnowledgeActivities>({ startToCloseTimeout: '30s', retry: { initialInterval: '1s', maximumInterval: '30s' } });

function reasonOf(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return cause.message;
  return cause instanceof Error ? cause.message : String(cause);
}

export async function knowledgeIngestWorkflow(input: KnowledgeIngestInput): Promise<KnowledgeIngestOutcome> {
  try {
    if (input.fetch && !(await knowledgeFetch({ documentId: input.documentId }))) return { status: 'deleted' };
    const chunks = await knowledgeIndex({ documentId: input.documentId });
    return chunks === null ? { status: 'deleted' } : { status: 'ready', chunks };
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const reason = reasonOf(err);
    await knowledgeFailed({ documentId: input.documentId, reason });
    return { status: 'failed', reason };
  }
}
