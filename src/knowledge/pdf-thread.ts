/**
 * A PDF's text per page, extracted on a thread of its own (pdf-thread-worker.ts) that is ended
 * after PDF_TIMEOUT_MS: a hostile or huge PDF costs that thread, never the worker's event loop.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';

// A 100-page text PDF takes well under a second; a minute means it will not finish.
const PDF_TIMEOUT_MS = 60_000;

export class PdfUnreadable extends Error {}

/** The worker's entry: compiled JavaScript in a build, TypeScript (through tsx) from the source tree. */
function workerEntry(): { file: string; execArgv?: string[] } {
  const ext = path.extname(__filename);
  const file = path.join(__dirname, `pdf-thread-worker${ext}`);
  return ext === '.ts' ? { file, execArgv: ['--require', require.resolve('tsx/cjs')] } : { file };
}

export function pdfPages(bytes: Uint8Array, timeoutMs = PDF_TIMEOUT_MS): Promise<string[]> {
  const { file, execArgv } = workerEntry();
  const worker = new Worker(file, { workerData: { bytes }, ...(execArgv ? { execArgv } : {}) });
  return new Promise<string[]>((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new PdfUnreadable(`the PDF was still being read after ${timeoutMs / 1000} s`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      void worker.terminate();
    };
    worker.once('message', (m: { pages?: string[]; error?: string }) => {
      done();
      if (m.pages) resolve(m.pages);
      else reject(new PdfUnreadable(m.error ?? 'unknown error'));
    });
    worker.once('error', (err) => (done(), reject(err)));
    worker.once('exit', (code) => (clearTimeout(timer), reject(new Error(`the PDF thread exited (code ${code})`))));
  });
}
