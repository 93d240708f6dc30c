/**
 * The steps of one document's ingestion (run as activities of workflows/knowledge-workflow.ts):
 * fetch a URL's content into the document row, then extract → chunk → index, with the progress
 * written as it goes so the API and the dashboard show it. Both steps read and write only
 * PostgreSQL, so a step retried after a worker died starts again from what is stored.
 */
import type { Database } from '../db/database';
import type { Embedder } from '../providers/embeddings';
import type { OutboundGuard } from '../security/outbound-guard';
import { replaceChunks, setProgress, type ChunkEmbeddings } from './chunk-store';
import { chunkBlocks } from './chunking';
import { DocumentUnreadable, extractBlocks } from './extract';
import { fetchDocument } from './fetch-document';

// A 10 MB text document makes about 6,500 chunks of 400 tokens; past this it is not a FAQ.
export const MAX_CHUNKS_PER_DOCUMENT = 20_000;
// One batch of chunks to embed: a local server on CPU takes seconds for it, not a search's budget.
const EMBED_REQUEST_TIMEOUT_MS = 60_000;

export interface IngestDeps {
  db: Database;
  guard: OutboundGuard;
  maxDocumentBytes: number;
  /** Semantic search's embedder; null: chunks are indexed for lexical search only. */
  embedder?: Embedder | null;
}

/** Fetches a URL document's content into its row. False: the document was deleted meanwhile. */
export async function fetchUrlDocument(deps: IngestDeps, documentId: string): Promise<boolean> {
  const doc = await deps.db.models.KnowledgeDocument.findByPk(documentId);
  if (!doc) return false;
  await setProgress(deps.db, documentId, 'fetching', 5);
  const { bytes, kind } = await fetchDocument(deps.guard, doc.get('url') as string, deps.maxDocumentBytes);
  await doc.update({ content: bytes, kind, size_bytes: bytes.length, progress: 20 });
  return true;
}

/** Extracts, chunks and indexes the stored content; answers the chunk count, or null when the document is gone. */
export async function indexDocument(deps: IngestDeps, documentId: string): Promise<number | null> {
  const doc = await deps.db.models.KnowledgeDocument.findByPk(documentId);
  if (!doc) return null;
  const content = doc.get('content') as Buffer | null;
  const kind = doc.get('kind') as Parameters<typeof extractBlocks>[0] | null;
  if (!content || !kind) throw new DocumentUnreadable('the document has no content');
  await setProgress(deps.db, documentId, 'extracting', 30);
  const blocks = await extractBlocks(kind, new Uint8Array(content));
  await setProgress(deps.db, documentId, 'chunking', 60);
  const chunks = chunkBlocks(blocks);
  if (chunks.length > MAX_CHUNKS_PER_DOCUMENT) throw new DocumentUnreadable(`the document makes ${chunks.length} chunks, more than the ${MAX_CHUNKS_PER_DOCUMENT} allowed`);
  // Before the transaction that writes them: no HTTP request holds a lock, and a failing embeddings
  // server fails this (retried) step with the previous chunks still searchable.
  let embeddings: ChunkEmbeddings | undefined;
  if (deps.embedder && chunks.length > 0) {
    await setProgress(deps.db, documentId, 'embedding', 70);
    embeddings = { model: deps.embedder.model, vectors: await deps.embedder.embed(chunks.map(embeddingText), { timeoutMs: EMBED_REQUEST_TIMEOUT_MS }) };
  }
  await setProgress(deps.db, documentId, 'indexing', 80);
  return (await replaceChunks(deps.db, documentId, chunks, embeddings)) ? chunks.length : null;
}

/** What a chunk is embedded as: its heading path says what the passage is about ("Prices > Roaming"). */
export function embeddingText(chunk: { heading: string; content: string }): string {
  return chunk.heading ? `${chunk.heading}\n\n${chunk.content}` : chunk.content;
}
