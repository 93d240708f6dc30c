/**
 * The PDF thread's entry (src/knowledge/pdf-thread.ts): one PDF's text, page by page, through
 * unpdf (PDF.js). Its own thread: unpdf loads PDF.js as an ES module, and a PDF's parse is CPU
 * work that must not hold the event loop of the worker, which also runs calls' activities.
 */
import { parentPort, workerData } from 'node:worker_threads';

const port = parentPort!;

async function main(): Promise<void> {
  // The CommonJS build; it imports PDF.js itself.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { extractText, getDocumentProxy } = require('unpdf') as typeof import('unpdf');
  const pdf = await getDocumentProxy(new Uint8Array((workerData as { bytes: Uint8Array }).bytes), { verbosity: 0 });
  const { text } = await extractText(pdf, { mergePages: false });
  port.postMessage({ pages: text });
}

main().catch((err: Error) => port.postMessage({ error: err?.message ?? String(err) }));
