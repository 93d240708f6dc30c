/**
 * The kinds of document a knowledge base takes, and how a file or a URL's answer is recognised as
 * one: by its name's extension first (what the uploader chose), then by its content type.
 */
export const DOCUMENT_KINDS = ['pdf', 'docx', 'markdown', 'text', 'html', 'csv'] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];

const BY_EXTENSION: Record<string, DocumentKind> = {
  pdf: 'pdf',
  docx: 'docx',
  md: 'markdown',
  markdown: 'markdown',
  txt: 'text',
  text: 'text',
  html: 'html',
  htm: 'html',
  csv: 'csv',
};

const BY_CONTENT_TYPE: Record<string, DocumentKind> = {
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/plain': 'text',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'text/csv': 'csv',
};

/** The kind of a file or URL path by its extension, or null. */
export function kindByName(name: string): DocumentKind | null {
  const match = /\.([a-z0-9]+)$/i.exec(name.split(/[?#]/)[0] ?? '');
  return match ? (BY_EXTENSION[match[1]!.toLowerCase()] ?? null) : null;
}

/** The kind of a content type (parameters such as charset ignored), or null. */
export function kindByContentType(contentType: string | undefined | null): DocumentKind | null {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return BY_CONTENT_TYPE[type] ?? null;
}

export const SUPPORTED_EXTENSIONS = Object.keys(BY_EXTENSION).map((e) => `.${e}`);
