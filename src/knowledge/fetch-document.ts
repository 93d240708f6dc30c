/**
 * A URL document's content, fetched through the outbound request guard (docs/security.md): the
 * rules of webhooks apply, every redirect is checked again, and the body is cut off past the
 * document size limit rather than read whole first.
 */
import got, { RequestError } from 'got';
import { OUTBOUND_BLOCKED, type OutboundGuard } from '../security/outbound-guard';
import { kindByContentType, kindByName, type DocumentKind } from './document-kinds';

// A web page answers within seconds; a slow server is tried again by the activity's retry.
const FETCH_TIMEOUT_MS = 30_000;

/** Refused for good (blocked address, 4xx, unsupported type, too large): not retried. */
export class DocumentFetchRefused extends Error {}

export interface FetchedDocument {
  bytes: Buffer;
  kind: DocumentKind;
}

export async function fetchDocument(guard: OutboundGuard, url: string, maxBytes: number): Promise<FetchedDocument> {
  const stream = got.stream(url, {
    ...guard.gotOptions(),
    timeout: { request: FETCH_TIMEOUT_MS },
    retry: { limit: 0 },
    maxRedirects: 5,
    headers: { 'user-agent': 'voice-agent-platform knowledge-base fetcher', accept: 'text/html, text/markdown, text/plain, text/csv, application/pdf, */*;q=0.5' },
  });
  let contentType: string | undefined;
  let finalUrl = url;
  stream.on('response', (res: { headers: Record<string, string | undefined>; url: string }) => {
    contentType = res.headers['content-type'];
    finalUrl = res.url;
  });
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const part of stream as AsyncIterable<Buffer>) {
      size += part.length;
      if (size > maxBytes) {
        stream.destroy();
        throw new DocumentFetchRefused(`the document at ${url} is larger than ${Math.round(maxBytes / 1e6)} MB`);
      }
      parts.push(part);
    }
  } catch (err) {
    throw describeFetchError(err, url);
  }
  // The server's word first (a page at /faq is HTML), then the path's extension.
  const kind = kindByContentType(contentType) ?? kindByName(new URL(finalUrl).pathname);
  if (!kind) throw new DocumentFetchRefused(`${url} answered ${contentType ?? 'no content type'}, which is not a supported document type`);
  return { bytes: Buffer.concat(parts), kind };
}

function describeFetchError(err: unknown, url: string): Error {
  if (err instanceof DocumentFetchRefused) return err;
  if (!(err instanceof RequestError)) return err as Error;
  if (err.code === OUTBOUND_BLOCKED || (err.cause as { code?: string } | undefined)?.code === OUTBOUND_BLOCKED) return new DocumentFetchRefused(err.message);
  const status = err.response?.statusCode;
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) return new DocumentFetchRefused(`${url} answered HTTP ${status}`);
  if (status !== undefined) return new Error(`${url} answered HTTP ${status}`);
  if (err.code === 'ETIMEDOUT' || err.name === 'TimeoutError') return new Error(`${url} did not answer within ${FETCH_TIMEOUT_MS / 1000} s`);
  if (err.code === 'ENOTFOUND') return new DocumentFetchRefused(`DNS lookup failed for ${new URL(url).hostname}`);
  if (err.code === 'ECONNREFUSED') return new Error(`connection refused by ${new URL(url).host}`);
  return new Error(`${url}: ${err.message}`);
}
