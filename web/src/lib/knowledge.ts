/** Display and upload helpers for knowledge bases and their documents (docs/knowledge-base.md). */
import type { KnowledgeDocument } from '../api/types';

/**
 * The extensions the file picker offers. The API decides from the name's extension
 * (src/knowledge/document-kinds.ts) and answers 422 for any other, shown beside the file; this
 * list only spares the user picking a file it would refuse.
 */
export const UPLOAD_ACCEPT = '.pdf,.docx,.md,.markdown,.txt,.text,.html,.htm,.csv';

/** `processing 40 %` (with its stage), `ready`, `failed: <reason>`. */
export function documentStatusText(doc: Pick<KnowledgeDocument, 'status' | 'progress' | 'stage' | 'error'>): string {
  if (doc.status === 'processing') return `processing ${doc.progress} %${doc.stage ? ` (${doc.stage})` : ''}`;
  if (doc.status === 'failed') return `failed: ${doc.error ?? 'unknown reason'}`;
  return 'ready';
}

export const DOCUMENT_STATUS_COLOR: Record<KnowledgeDocument['status'], string> = { processing: 'blue', ready: 'green', failed: 'red' };

export const isProcessing = (docs: ReadonlyArray<Pick<KnowledgeDocument, 'status'>> | undefined) => (docs ?? []).some((d) => d.status === 'processing');

export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1e6) return `${(bytes / 1e3).toFixed(1)} kB`;
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** A file's bytes as base64, the upload's `content_base64`: a data URL is encoded by the browser itself, where btoa would need the whole file as a byte string first. */
export function fileToBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      resolve(url.slice(url.indexOf(',') + 1));
    };
    reader.onerror = () => reject(reader.error ?? new Error(`${file.name} could not be read`));
    reader.readAsDataURL(file);
  });
}
