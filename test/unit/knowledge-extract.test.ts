/** Text extraction of every document kind (src/knowledge/extract.ts) from small fixture files; a corrupt PDF. */
import fs from 'node:fs';
import path from 'node:path';
import { DocumentUnreadable, extractBlocks } from '../../src/knowledge/extract';
import { kindByContentType, kindByName } from '../../src/knowledge/document-kinds';

const fixture = (name: string) => new Uint8Array(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'knowledge', name)));
const utf8 = (s: string) => new TextEncoder().encode(s);

it('recognises kinds by name first, then by content type', () => {
  expect(kindByName('Price List.PDF')).toBe('pdf');
  expect(kindByName('https://x.example/faq.md?v=2')).toBe('markdown');
  expect(kindByName('notes')).toBeNull();
  expect(kindByContentType('text/html; charset=utf-8')).toBe('html');
  expect(kindByContentType('application/vnd.openxmlformats-officedocument.wordprocessingml.document')).toBe('docx');
  expect(kindByContentType('image/png')).toBeNull();
});

it('reads a PDF page by page', async () => {
  const blocks = await extractBlocks('pdf', fixture('telecom-prices.pdf'));
  expect(blocks.map((b) => b.headings)).toEqual([['Page 1'], ['Page 2']]);
  expect(blocks[0]!.text).toContain('The Basic plan costs 199 rupees a month');
  expect(blocks[1]!.text).toContain('Roaming in the United Arab Emirates costs 599 rupees');
}, 30_000);

it('fails a corrupt PDF with a reason', async () => {
  const failure = extractBlocks('pdf', fixture('corrupt.pdf'));
  await expect(failure).rejects.toBeInstanceOf(DocumentUnreadable);
  await expect(failure).rejects.toThrow(/^the PDF could not be read: .+/);
}, 30_000);

it('reads a DOCX with its headings', async () => {
  expect(await extractBlocks('docx', fixture('returns-policy.docx'))).toEqual([
    { headings: ['Returns policy'], text: 'Devices bought from a Zenith store may be returned within 14 days with the receipt.' },
    { headings: ['Returns policy', 'Refunds'], text: 'Refunds are paid to the original card within 7 working days of the return.' },
  ]);
  await expect(extractBlocks('docx', utf8('not a zip file'))).rejects.toThrow(/^the DOCX could not be read: /);
});

it('reads HTML without its scripts, styles and navigation, tables as rows', async () => {
  const html =
    '<html><head><style>p{color:red}</style><script>alert(1)</script></head><body><nav>Home | About</nav><h1>Hours</h1><p>Open <b>daily</b>.</p>' +
    '<h2>Prices</h2><table><tr><th>Plan</th><th>Price</th></tr><tr><td>Basic</td><td>199</td></tr></table></body></html>';
  expect(await extractBlocks('html', utf8(html))).toEqual([
    { headings: ['Hours'], text: 'Open **daily**.' },
    { headings: ['Hours', 'Prices'], text: 'Plan: Basic; Price: 199' },
  ]);
});

it('reads Markdown, CSV rows with their headers, and plain text', async () => {
  const md = await extractBlocks('markdown', fixture('clinic-faq.md'));
  expect(md).toContainEqual({ headings: ['Sunrise Clinic FAQ', 'Prices'], text: 'Service: Blood test; Price: 25 euros' });
  expect(await extractBlocks('csv', utf8('\uFEFFquestion,answer\n"Do you open on Sunday?","No, never"\n\nParking?,Two hours free\n'))).toEqual([
    { headings: [], text: 'question: Do you open on Sunday?; answer: No, never' },
    { headings: [], text: 'question: Parking?; answer: Two hours free' },
  ]);
  expect(await extractBlocks('text', utf8('a\n\nb'))).toHaveLength(2);
  await expect(extractBlocks('text', utf8(' \n '))).rejects.toThrow('the text file has no text');
  await expect(extractBlocks('text', new Uint8Array([0x50, 0x4b, 0, 0]))).rejects.toThrow('the file is not text (it holds NUL bytes)');
  await expect(extractBlocks('csv', utf8('a,b\n"unclosed'))).rejects.toThrow(/^the CSV could not be read/);
});
