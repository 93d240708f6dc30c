/**
 * Words of a transcript as the turn policy compares them: Unicode NFC, lower case, apostrophes
 * dropped ("that's" = "thats"), every other punctuation mark or symbol a word break ("Uh-huh." =
 * "uh huh"). Letters, combining marks (the vowel signs of Indic scripts) and digits are kept.
 */
export function words(text: string): string[] {
  return text
    .normalize('NFC')
    .toLowerCase()
    .replace(/['’‘`]/g, '')
    .replace(/[^\p{L}\p{M}\p{N}]+/gu, ' ')
    .split(' ')
    .filter((w) => w.length > 0);
}

/** A set of phrases, each as its words, for matching against a transcript's words. */
export class PhraseSet {
  private readonly phrases = new Set<string>();
  /** The most words of any phrase: how far a match looks ahead. */
  readonly longest: number;

  constructor(phrases: Iterable<string>) {
    let longest = 0;
    for (const p of phrases) {
      const w = words(p);
      if (!w.length) continue;
      this.phrases.add(w.join(' '));
      longest = Math.max(longest, w.length);
    }
    this.longest = longest;
  }

  get size(): number {
    return this.phrases.size;
  }

  has(ws: readonly string[]): boolean {
    return this.phrases.has(ws.join(' '));
  }

  /** The length of the longest phrase starting at `ws[i]`, 0 for none. */
  matchAt(ws: readonly string[], i: number): number {
    for (let n = Math.min(this.longest, ws.length - i); n > 0; n--) {
      if (this.phrases.has(ws.slice(i, i + n).join(' '))) return n;
    }
    return 0;
  }

  /** The length of the longest phrase ending at the end of `ws`, 0 for none. */
  matchAtEnd(ws: readonly string[]): number {
    for (let n = Math.min(this.longest, ws.length); n > 0; n--) {
      if (this.phrases.has(ws.slice(ws.length - n).join(' '))) return n;
    }
    return 0;
  }
}
