/**
 * Cuts streamed LLM text into sentences for TTS, so the first sentence can be spoken while the
 * rest is still being generated. A sentence ends at . ! ? … (or their CJK forms) followed by
 * whitespace, or at a newline; a few abbreviations ("Dr.", "e.g.") and decimals ("3.5") do not
 * end one. A sentence that grows past MAX_SENTENCE_CHARS without an end is cut at its last
 * comma/semicolon/colon, else its last space, so one long run-on never holds back the audio.
 */

export const MAX_SENTENCE_CHARS = 200;

const TERMINATORS = new Set(['.', '!', '?', '…', '。', '！', '？']);
// CJK full stops are not followed by a space.
const NO_SPACE_TERMINATORS = new Set(['。', '！', '？']);
// Closing quotes/brackets that belong to the sentence they follow.
const CLOSERS = new Set(['"', "'", ')', ']', '”', '’', '»']);
const ABBREVIATIONS = new Set(['mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'st', 'vs', 'etc', 'e.g', 'i.e', 'no', 'approx', 'inc', 'ltd', 'co']);

export class SentenceSplitter {
  private buffer = '';

  /** Adds a text delta; returns the sentences it completed (trimmed, non-empty). */
  push(delta: string): string[] {
    this.buffer += delta;
    const out: string[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const ch = this.buffer[i]!;
      let end = -1;
      if (ch === '\n') end = i + 1;
      else if (TERMINATORS.has(ch)) {
        let j = i + 1;
        while (j < this.buffer.length && (TERMINATORS.has(this.buffer[j]!) || CLOSERS.has(this.buffer[j]!))) j++;
        if (NO_SPACE_TERMINATORS.has(ch)) end = j;
        // Wait for the next character: only whitespace after the mark proves the sentence ended.
        else if (j < this.buffer.length && /\s/.test(this.buffer[j]!) && !this.isAbbreviationOrNumber(start, i)) end = j;
        if (end < 0) {
          i = j - 1;
          continue;
        }
        i = end - 1;
      }
      if (end > 0) {
        const sentence = this.buffer.slice(start, end).trim();
        if (sentence) out.push(sentence);
        start = end;
      }
    }
    this.buffer = this.buffer.slice(start);
    while (this.buffer.length > MAX_SENTENCE_CHARS) {
      const cut = fallbackCut(this.buffer);
      const sentence = this.buffer.slice(0, cut).trim();
      if (sentence) out.push(sentence);
      this.buffer = this.buffer.slice(cut);
    }
    return out;
  }

  /** The text left over at the end of the stream (trimmed; null if only whitespace). */
  flush(): string | null {
    const rest = this.buffer.trim();
    this.buffer = '';
    return rest || null;
  }

  private isAbbreviationOrNumber(start: number, dot: number): boolean {
    if (this.buffer[dot] !== '.') return false;
    const before = this.buffer.slice(start, dot);
    const word = /(\S+)$/.exec(before)?.[1] ?? '';
    if (ABBREVIATIONS.has(word.toLowerCase())) return true;
    // "1." at the start of a line or after a space is a list number, not a sentence.
    return /^\d{1,2}$/.test(word) && before.trim() === word;
  }
}

function fallbackCut(text: string): number {
  const window = text.slice(0, MAX_SENTENCE_CHARS);
  const punct = Math.max(window.lastIndexOf(', '), window.lastIndexOf('; '), window.lastIndexOf(': '));
  if (punct > MAX_SENTENCE_CHARS / 3) return punct + 1;
  const space = window.lastIndexOf(' ');
  return space > 0 ? space + 1 : MAX_SENTENCE_CHARS;
}

/** A whole text as sentences (for `speak`, whose text is known up front). */
export function splitSentences(text: string): string[] {
  const splitter = new SentenceSplitter();
  const out = splitter.push(text);
  const rest = splitter.flush();
  if (rest) out.push(rest);
  return out;
}
