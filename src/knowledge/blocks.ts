/**
 * A document's structure as the chunker sees it: blocks of text (a paragraph, a list, a table
 * row, a code block), each under the path of headings it sits in. Every extractor produces these,
 * whatever the file was, so chunking is one piece of code for every kind.
 */
export interface Block {
  /** The headings above the block, outermost first (`['Prices', 'Roaming']`); empty at the top. */
  headings: string[];
  text: string;
}

const ATX_HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const FENCE = /^\s*(```|~~~)/;
const TABLE_ROW = /^\s*\|.*\|\s*$/;
const TABLE_RULE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

const cells = (row: string) =>
  row
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((c) => c.trim());

/**
 * A table row as one self-contained line, `header: value; header: value`: a row retrieved alone
 * still says what its numbers are (a price list's row without its header answers nothing).
 */
export function rowText(headers: string[], values: string[]): string {
  return values
    .map((value, i) => (headers[i] ? `${headers[i]}: ${value}` : value))
    .filter((part) => part.replace(/^[^:]*:\s*/, '') !== '')
    .join('; ');
}

/** Markdown (CommonMark's ATX headings, paragraphs, lists, fenced code and pipe tables) as blocks. */
export function markdownBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const headings: string[] = [];
  let paragraph: string[] = [];
  let table: { headers: string[] } | null = null;
  let fence: string | null = null;
  const flush = () => {
    const text = paragraph.join('\n').trim();
    if (text) blocks.push({ headings: [...headings], text });
    paragraph = [];
  };
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (fence !== null) {
      paragraph.push(line);
      if (line.trim().startsWith(fence)) (fence = null), flush();
      continue;
    }
    const fenceOpen = FENCE.exec(line);
    if (fenceOpen) {
      flush();
      fence = fenceOpen[1]!;
      paragraph.push(line);
      continue;
    }
    if (TABLE_ROW.test(line)) {
      if (!table) {
        flush();
        // A header row is followed by its rule; a table without one has no headers.
        const hasRule = TABLE_RULE.test(lines[i + 1] ?? '');
        table = { headers: hasRule ? cells(line) : [] };
        if (hasRule) i++;
        if (hasRule) continue;
      }
      const text = rowText(table.headers, cells(line));
      if (text) blocks.push({ headings: [...headings], text });
      continue;
    }
    table = null;
    const heading = ATX_HEADING.exec(line);
    // Setext headings (a line underlined with === or ---) under a one-line paragraph.
    const setext = paragraph.length === 1 && /^\s*(=+|-+)\s*$/.test(line) ? (line.includes('=') ? 1 : 2) : 0;
    if (heading || setext) {
      const level = heading ? heading[1]!.length : setext;
      const title = heading ? heading[2]!.replace(/[*_`]/g, '').trim() : paragraph[0]!.trim();
      if (setext) paragraph = [];
      flush();
      headings.length = Math.min(headings.length, level - 1);
      while (headings.length < level - 1) headings.push('');
      headings[level - 1] = title;
      continue;
    }
    if (line.trim() === '') flush();
    else paragraph.push(line);
  }
  flush();
  // Levels skipped (an h3 straight under an h1) leave empty places: drop them from the path.
  return blocks.map((b) => ({ ...b, headings: b.headings.filter(Boolean) }));
}

/** Plain text: paragraphs are separated by blank lines; no headings. */
export function textBlocks(text: string, headings: string[] = []): Block[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => ({ headings, text: p }));
}
