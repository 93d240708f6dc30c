/** The knowledge-document ingestion workflow's id and input: shared by the API and the workflow (no I/O). */

export const knowledgeWorkflowId = (documentId: string) => `knowledge-document-${documentId}`;
/** The Temporal schedule that re-fetches a URL document every `refresh_hours`. */
export const knowledgeRefreshScheduleId = (documentId: string) => `knowledge-refresh-${documentId}`;

export interface KnowledgeIngestInput {
  documentId: string;
  /** URL documents are fetched first; an upload's bytes are already stored. */
  fetch: boolean;
}

export type KnowledgeIngestOutcome = { status: 'ready'; chunks: number } | { status: 'failed'; reason: string } | { status: 'deleted' };
