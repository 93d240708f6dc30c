/** Documents into blocks and chunks (src/knowledge/blocks.ts, chunking.ts): structure kept, sizes bounded, overlap. */
import { markdownBlocks, textBlocks } from '../../src/knowledge/blocks';
import { CHUNK_MAX_TOKENS, chunkBlocks, estimateTokens } from '../../src/knowledge/chunking';

describe('markdown blocks', () => {
  it('keeps the heading path of every paragraph, list and table row', () => {
    const blocks = markdownBlocks(
      ['# Clinic', 'Intro.', '', '## Prices', '| Service | Price |', '|---|:--:|', '| Blood test | 25 euros |', '', '### Children', '- free under 6', '- half price under 12', '', '## Hours', 'Open 8 to 6.'].join('\n'),
    );
    expect(blocks).toEqual([
      { headings: ['Clinic'], text: 'Intro.' },
      { headings: ['Clinic', 'Prices'], text: 'Service: Blood test; Price: 25 euros' },
      { headings: ['Clinic', 'Prices', 'Children'], text: '- free under 6\n- half price under 12' },
      { headings: ['Clinic', 'Hours'], text: 'Open 8 to 6.' },
    ]);
  });

  it('reads setext headings, keeps a fenced code block whole and drops skipped levels from the path', () => {
    const blocks = markdownBlocks(['Policy', '======', 'Text one.', '', '```', 'a', '', 'b', '```', '### Deep', 'Deep text.'].join('\n'));
    expect(blocks).toEqual([
      { headings: ['Policy'], text: 'Text one.' },
      { headings: ['Policy'], text: '```\na\n\nb\n```' },
      { headings: ['Policy', 'Deep'], text: 'Deep text.' },
    ]);
  });

  it('splits plain text at blank lines', () => {
    expect(textBlocks('one\r\ntwo\r\n\r\n  \nthree')).toEqual([
      { headings: [], text: 'one\ntwo' },
      { headings: [], text: 'three' },
    ]);
  });
});

describe('chunks', () => {
  const sentence = (i: number) => `Sentence number ${i} says something about the refund rules of the shop.`;

  it('never spans two sections and numbers chunks in document order', () => {
    const chunks = chunkBlocks([
      { headings: ['A'], text: 'First.' },
      { headings: ['A'], text: 'Second.' },
      { headings: ['B'], text: 'Third.' },
      { headings: [], text: 'Fourth.' },
    ]);
    expect(chunks.map(({ position, heading, content }) => ({ position, heading, content }))).toEqual([
      { position: 0, heading: 'A', content: 'First.\n\nSecond.' },
      { position: 1, heading: 'B', content: 'Third.' },
      { position: 2, heading: '', content: 'Fourth.' },
    ]);
  });

  it('packs a long section into chunks of at most the maximum, each starting with the end of the one before', () => {
    const paragraphs = Array.from({ length: 40 }, (_, i) => ({ headings: ['Refunds'], text: `${sentence(2 * i)} ${sentence(2 * i + 1)}` }));
    const chunks = chunkBlocks(paragraphs);
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) {
      expect(chunk.tokens).toBeLessThanOrEqual(CHUNK_MAX_TOKENS);
      expect(chunk.tokens).toBe(estimateTokens(chunk.content));
      expect(chunk.heading).toBe('Refunds');
    }
    // Most chunks are in the 200–400 band; only the last may be short.
    expect(chunks.slice(0, -1).every((c) => c.tokens >= 200)).toBe(true);
    for (let i = 1; i < chunks.length; i++) {
      const previous = chunks[i - 1]!.content.replace(/\s+/g, ' ');
      const overlap = chunks[i]!.content.split('\n\n')[0]!;
      expect(previous.endsWith(overlap)).toBe(true);
      expect(estimateTokens(overlap)).toBeLessThanOrEqual(50);
    }
    // Every sentence is in some chunk.
    for (let i = 0; i < 80; i++) expect(chunks.some((c) => c.content.includes(sentence(i)))).toBe(true);
  });

  it('cuts one paragraph longer than a chunk at its sentences, and a sentence without an end at words', () => {
    const long = Array.from({ length: 60 }, (_, i) => sentence(i)).join(' ');
    const chunks = chunkBlocks([{ headings: [], text: long }]);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((c) => c.tokens <= CHUNK_MAX_TOKENS)).toBe(true);
    const words = chunkBlocks([{ headings: [], text: 'word '.repeat(2000).trim() }]);
    expect(words.length).toBeGreaterThan(4);
    expect(words.every((c) => c.tokens <= CHUNK_MAX_TOKENS)).toBe(true);
  });

  it('cuts Hindi text at the danda', () => {
    const hindi = Array.from({ length: 80 }, (_, i) => `क्लिनिक सोमवार से शुक्रवार तक सुबह आठ बजे से खुला रहता है ${i}।`).join(' ');
    const chunks = chunkBlocks([{ headings: ['समय'], text: hindi }]);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((c) => c.content.endsWith('।'))).toBe(true);
  });
});
