/**
 * Reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009): each ranked list adds w/(k + rank)
 * to a chunk's score. It fuses lists whose scores are not comparable (a ts_rank, a trigram
 * similarity, a cosine) by their order alone, which is why hybrid search needs no tuning of
 * weights between them.
 */

// The constant of the paper: high enough that a first place in one list does not outweigh
// agreement of several lists lower down.
export const RRF_K = 60;

export interface Ranked {
  id: string;
  /** The list's own relevance, 0–1 (kept for the threshold and for display). */
  relevance: number;
}

export interface Fused {
  id: string;
  /** Sum of 1/(k + rank) over the lists the chunk is in. */
  score: number;
  /** The best relevance any list gave it. */
  relevance: number;
}

export interface RankedList {
  items: Ranked[];
  /**
   * How much a place in this list counts (weighted RRF). Full-text and semantic lists count 1; the
   * trigram list less, since it is the fallback for what stemming misses: when the two disagree
   * about two passages, the word match decides rather than a tie.
   */
  weight: number;
}

export function fuseRankings(lists: RankedList[], k = RRF_K): Fused[] {
  const fused = new Map<string, Fused>();
  for (const list of lists) {
    list.items.forEach((item, index) => {
      const entry = fused.get(item.id) ?? { id: item.id, score: 0, relevance: 0 };
      entry.score += list.weight / (k + index + 1);
      entry.relevance = Math.max(entry.relevance, item.relevance);
      fused.set(item.id, entry);
    });
  }
  // Ties (same ranks in the same lists) keep a stable order: the better relevance, then the id.
  return [...fused.values()].sort((a, b) => b.score - a.score || b.relevance - a.relevance || a.id.localeCompare(b.id));
}
