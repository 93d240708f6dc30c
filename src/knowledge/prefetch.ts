/**
 * Retrieval started before the turn needs it (docs/knowledge-base.md, "On the interim
 * transcript"): when the VAD says the caller stopped, the gateway searches with what the STT has
 * heard so far, while the final transcript is still on its way; the turn's own search then finds
 * that one in flight (or done) and waits for nothing more. A query is the same search whatever its
 * case, punctuation and spacing (PostgreSQL's text search and the trigram words ignore them), so
 * "hello, I'd like…" heard early answers "Hello, I'd like…" at the end. Another text (the final
 * said more, or something else) is searched afresh. One per call: a call's own few searches.
 */
import { queryWords, type KnowledgeRetriever, type Retrieval, type SearchRequest } from './retrieval';

// A search started this long ago is not reused: the base may have changed since.
const FRESH_MS = 10_000;
// The one or two most recent: the turn being finalized (and one it replaced).
const KEPT = 2;

interface Started {
  key: string;
  atMs: number;
  passages: Promise<Retrieval>;
}

/** The words of a query as the search sees them. */
export function searchKey(request: SearchRequest): string {
  const words = queryWords(request.query).join(' ');
  return `${[...request.knowledgeBaseIds].sort().join(',')}|${request.topK}|${request.threshold ?? 0}|${words}`;
}

export class PrefetchingRetriever implements KnowledgeRetriever {
  private started: Started[] = [];
  /** Searches answered from a prefetch (for the event and the tests). */
  hits = 0;

  constructor(private readonly inner: KnowledgeRetriever) {}

  /** Starts a search a turn is likely to ask for; its failure is the turn's, if the turn asks. */
  prefetch(request: SearchRequest): void {
    const key = searchKey(request);
    if (this.find(key)) return;
    const passages = this.inner.search(request);
    passages.catch(() => undefined);
    this.started = [...this.started.slice(-(KEPT - 1)), { key, atMs: performance.now(), passages }];
  }

  /** The prefetched search of `request`, taken (used once: a later turn with the same words searches again); null if none is fresh. */
  take(request: SearchRequest): Promise<Retrieval> | null {
    const hit = this.find(searchKey(request));
    if (!hit) return null;
    this.hits++;
    this.started = this.started.filter((s) => s !== hit);
    return hit.passages;
  }

  search(request: SearchRequest): Promise<Retrieval> {
    return this.take(request) ?? this.inner.search(request);
  }

  private find(key: string): Started | undefined {
    const now = performance.now();
    return this.started.find((s) => s.key === key && now - s.atMs <= FRESH_MS);
  }
}
