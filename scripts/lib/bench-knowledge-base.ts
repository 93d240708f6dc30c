/**
 * `bench:voice --knowledge`: one knowledge base for the benchmark's agent, in `auto` mode, so every
 * turn of every call searches it before its LLM request (docs/knowledge-base.md, "Which calls").
 * Its documents are the shipped fixtures (test/fixtures/knowledge) and, when present, the
 * retrieval evaluation corpus (test/fixtures/knowledge-eval), uploaded through the API and
 * ingested by the worker as a user's would be.
 */
import fs from 'node:fs';
import path from 'node:path';

type Api = (method: string, p: string, body?: unknown) => Promise<any>;

const ROOT = path.join(__dirname, '..', '..');
const KINDS = /\.(md|pdf|docx|txt|html|csv)$/;

function documentsToUpload(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      // corrupt.pdf is the ingestion tests' failure case.
      else if (KINDS.test(entry.name) && entry.name !== 'corrupt.pdf') files.push(file);
    }
  };
  walk(path.join(ROOT, 'test/fixtures/knowledge'));
  walk(path.join(ROOT, 'test/fixtures/knowledge-eval'));
  return files;
}

export interface BenchKnowledge {
  id: string;
  documents: number;
  chunks: number;
}

/** Creates the base, uploads the documents and waits until every one is ready. */
export async function createBenchKnowledge(api: Api, timeoutMs = 120_000): Promise<BenchKnowledge> {
  const base = await api('POST', '/api/knowledge-bases', { name: `bench-${Date.now()}`, language: 'en' });
  const files = documentsToUpload();
  for (const file of files) {
    // Names must be unique in a base; the corpus has the same file name in each language folder.
    const name = path.relative(ROOT, file).replace(/[\\/]/g, '_');
    await api('POST', `/api/knowledge-bases/${base.id}/documents`, { name, content_base64: fs.readFileSync(file).toString('base64') });
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const docs = (await api('GET', `/api/knowledge-bases/${base.id}/documents`)) as Array<{ name: string; status: string; error: string | null }>;
    const failed = docs.find((d) => d.status === 'failed');
    if (failed) throw new Error(`knowledge document ${failed.name} failed: ${failed.error}`);
    if (docs.length === files.length && docs.every((d) => d.status === 'ready')) break;
    if (Date.now() > deadline) throw new Error(`knowledge documents not ready after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const ready = await api('GET', `/api/knowledge-bases/${base.id}`);
  return { id: base.id, documents: files.length, chunks: ready.chunk_count };
}

type Query = (sql: string) => Promise<[unknown[], unknown]>;

/**
 * How the turns' retrievals went, from the calls' events: searched (with the search's own ms),
 * or skipped and why. A run whose turns were all skipped measured nothing of retrieval.
 */
export async function knowledgeTally(query: Query): Promise<string> {
  const [rows] = (await query(
    `SELECT event_type, data->>'reason' AS reason, count(*)::int AS n, count(*) FILTER (WHERE data->>'prefetched' = 'true')::int AS prefetched,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY (data->>'ms')::float) AS p50,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY (data->>'ms')::float) AS p95
       FROM call_events WHERE event_type IN ('knowledge_retrieved', 'knowledge_skipped')
      GROUP BY 1, 2 ORDER BY 1, 2`,
  )) as [Array<{ event_type: string; reason: string | null; n: number; prefetched: number; p50: number; p95: number }>, unknown];
  if (!rows.length) return 'no retrieval events (no turn searched the knowledge base)';
  return rows
    .map((r) => `${r.event_type}${r.reason ? ` (${r.reason})` : ''}: ${r.n} (${r.prefetched} begun on the interim transcript), wait ms p50 ${r.p50.toFixed(1)} / p95 ${r.p95.toFixed(1)}`)
    .join('; ');
}
