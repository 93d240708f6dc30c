/**
 * A document's bytes as blocks (blocks.ts), with a maintained library for every format that
 * needs one: unpdf (PDF.js) for PDF, mammoth for DOCX (its headings kept, through HTML),
 * node-html-markdown for HTML, csv-parse for CSV. HTML and DOCX become Markdown first, so one
 * reader finds the headings, lists and tables of all three.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import mammoth from 'mammoth';
import { NodeHtmlMarkdown } from 'node-html-markdown';
import { markdownBlocks, rowText, textBlocks, type Block } from './blocks';
import type { DocumentKind } from './document-kinds';
import { pdfPages } from './pdf-thread';

/** The document cannot be read as what it says it is (retrying will not help). */
export class DocumentUnreadable extends Error {}

const decode = (bytes: Uint8Array): string => {
  const text = new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, '');
  // PostgreSQL stores no NUL; a text full of them was never text.
  if (text.includes('\u0000')) throw new DocumentUnreadable('the file is not text (it holds NUL bytes)');
  return text;
};

const htmlToMarkdown = (html: string) => NodeHtmlMarkdown.translate(html, { ignore: ['script', 'style', 'noscript', 'nav', 'footer', 'template'] });

async function docxHtml(bytes: Uint8Array): Promise<string> {
  try {
    return (await mammoth.convertToHtml({ buffer: Buffer.from(bytes) })).value;
  } catch (err) {
    throw new DocumentUnreadable(`the DOCX could not be read: ${(err as Error).message}`);
  }
}

function csvBlocks(text: string): Block[] {
  let rows: string[][];
  try {
    rows = parseCsv(text, { relax_column_count: true, skip_empty_lines: true, trim: true }) as string[][];
  } catch (err) {
    throw new DocumentUnreadable(`the CSV could not be read: ${(err as Error).message}`);
  }
  const [headers = [], ...body] = rows;
  return body.map((row) => ({ headings: [], text: rowText(headers, row) })).filter((b) => b.text);
}

async function pdfBlocks(bytes: Uint8Array): Promise<Block[]> {
  let pages: string[];
  try {
    pages = await pdfPages(bytes);
  } catch (err) {
    throw new DocumentUnreadable(`the PDF could not be read: ${(err as Error).message}`);
  }
  const blocks = pages.flatMap((text, i) => textBlocks(text.replace(/\u0000/g, ''), [`Page ${i + 1}`]));
  if (blocks.length === 0) throw new DocumentUnreadable('the PDF has no text (scanned pages would need OCR, which is not done)');
  return blocks;
}

export async function extractBlocks(kind: DocumentKind, bytes: Uint8Array): Promise<Block[]> {
  let blocks: Block[];
  switch (kind) {
    case 'pdf':
      return pdfBlocks(bytes);
    case 'docx':
      blocks = markdownBlocks(htmlToMarkdown(await docxHtml(bytes)));
      break;
    case 'html':
      blocks = markdownBlocks(htmlToMarkdown(decode(bytes)));
      break;
    case 'markdown':
      blocks = markdownBlocks(decode(bytes));
      break;
    case 'csv':
      blocks = csvBlocks(decode(bytes));
      break;
    case 'text':
      blocks = textBlocks(decode(bytes));
      break;
  }
  if (blocks.length === 0) throw new DocumentUnreadable(`the ${kind === 'text' ? 'text' : kind.toUpperCase()} file has no text`);
  return blocks;
}
