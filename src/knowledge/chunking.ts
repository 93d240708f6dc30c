/**
 * Blocks into chunks: the unit retrieval ranks and the call's LLM is given. A chunk never spans
 * two sections (its heading path says where it came from); within a section, blocks are packed up
 * to CHUNK_MAX_TOKENS, a block longer than that is cut at sentences (then words), and each chunk
 * after the first of a section starts with the end of the one before (CHUNK_OVERLAP_TOKENS), so
 * a sentence cut from its context is still found with it.
 */
import type { Block } from './blocks';

// 200–400 tokens: long enough to hold a whole answer (a policy paragraph, a price table's rows),
// short enough that top-k passages fit a voice turn's prompt without costing its latency. A short
// section (one FAQ answer) stays a short chunk of its own rather than merging with the next.
export const CHUNK_MAX_TOKENS = 400;
export const CHUNK_OVERLAP_TOKENS = 50;

export interface Chunk {
  /** 0, 1, 2… in document order. */
  position: number;
  /** The heading path joined with ` > ` (empty at the top of a document). */
  heading: string;
  content: string;
  tokens: number;
}

/**
 * An estimate, not a tokenizer's count: about four characters a token for English text, as
 * OpenAI's tokenizers average; Devanagari or Tamil count higher, so their chunks come out shorter
 * in tokens than this says, which only errs on the safe side of the prompt budget.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

const SENTENCE_END = /(?<=[.!?।॥])\s+/u;

/** A text longer than `max` tokens cut at sentence ends, and a sentence still too long at words. */
function pieces(text: string, max: number): string[] {
  if (estimateTokens(text) <= max) return [text];
  const out: string[] = [];
  for (const sentence of text.split(SENTENCE_END)) {
    if (estimateTokens(sentence) <= max) {
      out.push(sentence);
      continue;
    }
    let line = '';
    for (const word of sentence.split(/\s+/)) {
      if (line && estimateTokens(`${line} ${word}`) > max) (out.push(line), (line = ''));
      line = line ? `${line} ${word}` : word;
    }
    if (line) out.push(line);
  }
  return out;
}

/** The last sentences of `text` that fit in `budget` tokens (the next chunk's overlap). */
function tail(text: string, budget: number): string {
  const sentences = text.split(SENTENCE_END);
  let out = '';
  for (let i = sentences.length - 1; i >= 0; i--) {
    const next = out ? `${sentences[i]} ${out}` : sentences[i]!;
    if (estimateTokens(next) > budget) break;
    out = next;
  }
  return out;
}

export function chunkBlocks(blocks: Block[], options: { maxTokens?: number; overlapTokens?: number } = {}): Chunk[] {
  const max = options.maxTokens ?? CHUNK_MAX_TOKENS;
  const overlap = options.overlapTokens ?? CHUNK_OVERLAP_TOKENS;
  const chunks: Chunk[] = [];
  let heading: string | null = null;
  let parts: string[] = [];
  // Whether the current chunk holds anything beyond the overlap it was started with.
  let fresh = false;
  const emit = () => {
    const content = parts.join('\n\n').trim();
    if (content && fresh) chunks.push({ position: chunks.length, heading: heading ?? '', content, tokens: estimateTokens(content) });
    parts = [];
    fresh = false;
  };
  for (const block of blocks) {
    const path = block.headings.join(' > ');
    if (path !== heading) {
      emit();
      heading = path;
    }
    for (const piece of pieces(block.text, max - overlap)) {
      const joined = [...parts, piece].join('\n\n');
      if (parts.length > 0 && estimateTokens(joined) > max) {
        const carried = tail(parts.join(' '), overlap);
        emit();
        if (carried) parts.push(carried);
      }
      parts.push(piece);
      fresh = true;
    }
  }
  emit();
  return chunks;
}
