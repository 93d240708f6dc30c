/**
 * Writes the small documents the knowledge-base tests extract (test/fixtures/knowledge/): a
 * two-page PDF and a DOCX with headings, both made here rather than by an office suite so anyone
 * can regenerate them (`npx tsx scripts/make-knowledge-fixtures.ts`; the DOCX needs `zip`). The
 * Markdown, CSV and corrupt PDF fixtures are written by hand.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const OUT = path.join(__dirname, '..', 'test', 'fixtures', 'knowledge');

/** A PDF of one Helvetica text line per entry, one page per array; offsets computed for the xref. */
function pdf(pages: string[][]): Buffer {
  const escape = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);
  const objects: string[] = [];
  const pageIds = pages.map((_, i) => 4 + i * 2);
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
  pages.forEach((lines, i) => {
    const stream = `BT /F1 12 Tf 72 720 Td ${lines.map((l, j) => `${j ? '0 -18 Td ' : ''}(${escape(l)}) Tj`).join(' ')} ET`;
    objects[pageIds[i]!] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageIds[i]! + 1} 0 R >>`;
    objects[pageIds[i]! + 1] = `<< /Length ${Buffer.byteLength(stream)} >>\nstream\n${stream}\nendstream`;
  });
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = Buffer.byteLength(body);
    body += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(body);
  body += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++) body += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** A DOCX of headings and paragraphs (the parts Word needs, nothing else). */
function docx(file: string, blocks: Array<{ style?: 'Heading1' | 'Heading2'; text: string }>): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docx-'));
  const write = (name: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  };
  const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
  write(
    '[Content_Types].xml',
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>',
  );
  write(
    '_rels/.rels',
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
  );
  write(
    'word/_rels/document.xml.rels',
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>',
  );
  const style = (id: string, name: string) => `<w:style w:type="paragraph" w:styleId="${id}"><w:name w:val="${name}"/></w:style>`;
  write('word/styles.xml', `<?xml version="1.0" encoding="UTF-8"?><w:styles xmlns:w="${W}">${style('Heading1', 'heading 1')}${style('Heading2', 'heading 2')}</w:styles>`);
  const paragraphs = blocks
    .map((b) => `<w:p>${b.style ? `<w:pPr><w:pStyle w:val="${b.style}"/></w:pPr>` : ''}<w:r><w:t xml:space="preserve">${b.text.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</w:t></w:r></w:p>`)
    .join('');
  write('word/document.xml', `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${W}"><w:body>${paragraphs}</w:body></w:document>`);
  fs.rmSync(file, { force: true });
  execFileSync('zip', ['-q', '-X', '-r', file, '[Content_Types].xml', '_rels', 'word'], { cwd: dir });
  fs.rmSync(dir, { recursive: true });
}

fs.mkdirSync(OUT, { recursive: true });
fs.writeFileSync(
  path.join(OUT, 'telecom-prices.pdf'),
  pdf([
    [
      'Zenith Mobile price list',
      'The Basic plan costs 199 rupees a month with 2 GB of data a day.',
      'The Family plan costs 799 rupees a month for four SIM cards.',
    ],
    [
      'International roaming',
      'Roaming in the United Arab Emirates costs 599 rupees for ten days.',
      'Activate roaming by sending ROAM to 121 before you travel.',
    ],
  ]),
);
docx(path.join(OUT, 'returns-policy.docx'), [
  { style: 'Heading1', text: 'Returns policy' },
  { text: 'Devices bought from a Zenith store may be returned within 14 days with the receipt.' },
  { style: 'Heading2', text: 'Refunds' },
  { text: 'Refunds are paid to the original card within 7 working days of the return.' },
]);
console.log(`wrote ${OUT}`);
