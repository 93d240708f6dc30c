/**
 * A document's ingestion survives its worker dying (docs/knowledge-base.md, "Nothing
 * half-indexed"): the worker runs in its own process and is killed with SIGKILL twice — while it
 * fetches a URL document (the local site holds its answer), and in the middle of the transaction
 * that replaces a ready document's chunks (held by a lock this test takes on the base's word
 * table, after the old chunks were deleted and the new ones inserted, uncommitted). Each time
 * PostgreSQL holds either nothing or the old version whole, and after a new worker starts the
 * document is `ready` with every chunk of the new version, and searchable.
 */
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { eventually } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { killHard, spawnWorkerProcess } from '../support/worker-process-control';

let h: Harness;
let site: http.Server;
let siteUrl: string;
const workers: ChildProcess[] = [];
const held: http.ServerResponse[] = [];

// A short section stays a chunk of its own (chunking.ts), so a version's chunk count is its sections'.
const section = (i: number, words: string) => `## Section ${i}\n\nEntry ${i}: ${words} number ${i} is kept in the archive room.\n`;
const V1_SECTIONS = 3;
const V2_SECTIONS = 150;
const V1 = `# Manual\n\n${Array.from({ length: V1_SECTIONS }, (_, i) => section(i, 'the walnut ledger')).join('\n')}`;
const V2 = `# Manual\n\n${Array.from({ length: V2_SECTIONS }, (_, i) => section(i, 'the copper lantern')).join('\n')}`;
let served = V1;
let holdNextFetch = false;
const fetches: string[] = [];

beforeAll(async () => {
  site = http.createServer((req, res) => {
    fetches.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/markdown; charset=utf-8' });
    if (holdNextFetch) {
      // Half the document, then nothing: the fetch is in flight until its worker dies.
      holdNextFetch = false;
      res.write(served.slice(0, served.length / 2));
      held.push(res);
      return;
    }
    res.end(served);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  h = await startHarness();
});
afterAll(async () => {
  for (const w of workers) await killHard(w);
  for (const res of held) res.destroy();
  await h?.stop();
  await new Promise((resolve) => site?.close(resolve));
});

async function newWorker() {
  const worker = await spawnWorkerProcess(h);
  workers.push(worker);
  return worker;
}

const documentPath = (baseId: string, documentId: string) => `/api/knowledge-bases/${baseId}/documents/${documentId}`;

async function chunksOf(documentId: string) {
  const [rows] = await h.db.sequelize.query(`SELECT id, position, content FROM knowledge_chunks WHERE document_id = :documentId ORDER BY position`, { replacements: { documentId } });
  return rows as Array<{ id: string; position: number; content: string }>;
}

async function searchDocuments(baseId: string, query: string) {
  const res = await h.request('POST', `/api/knowledge-bases/${baseId}/search`, { body: { query, top_k: 3 } });
  expect(res.status).toBe(200);
  return (res.body.passages as Array<{ document: string; content: string }>).map((p) => p.content);
}

/** The document once ready (the retry after a killed worker waits out the 10-s heartbeat timeout). */
function ready(baseId: string, documentId: string) {
  return eventually(async () => {
    const doc = (await h.request('GET', documentPath(baseId, documentId))).body;
    if (doc.status === 'failed') throw new Error(`the document failed: ${doc.error}`);
    return doc.status === 'ready' && doc;
  }, 90_000, 200);
}

it('killing the worker mid-ingestion leaves no half-indexed document and the workflow finishes after restart', async () => {
  const baseId = (await h.request('POST', '/api/knowledge-bases', { body: { name: 'durable-kb' } })).body.id as string;
  let worker = await newWorker();

  // 1. A first ingestion, killed while its fetch is in flight: nothing is indexed.
  holdNextFetch = true;
  const created = await h.request('POST', `/api/knowledge-bases/${baseId}/documents`, { body: { url: `${siteUrl}/manual.md` } });
  expect(created.status).toBe(202);
  const documentId = created.body.id as string;
  await eventually(async () => held.length === 1, 30_000);
  expect((await h.request('GET', documentPath(baseId, documentId))).body).toMatchObject({ status: 'processing', stage: 'fetching', progress: 5 });
  await killHard(worker);
  expect(await chunksOf(documentId)).toEqual([]);
  worker = await newWorker();
  const first = await ready(baseId, documentId);
  expect(first).toMatchObject({ progress: 100, chunk_count: V1_SECTIONS, kind: 'markdown', error: null });
  expect(fetches).toHaveLength(2);
  const v1 = await chunksOf(documentId);
  expect(v1.map((c) => c.position)).toEqual([0, 1, 2]);
  expect(v1.every((c) => c.content.includes('walnut ledger'))).toBe(true);
  expect(await searchDocuments(baseId, 'walnut ledger')).toHaveLength(3);

  // 2. A refresh to a longer version, killed inside the transaction that replaces the chunks: the
  // transaction has deleted v1's chunks and inserted v2's when it reaches the base's words, which
  // this lock holds (searches only read them, so they go on).
  served = V2;
  const lock = new Client({ connectionString: h.dbUrl });
  await lock.connect();
  try {
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE knowledge_words IN EXCLUSIVE MODE');
    expect((await h.request('POST', `${documentPath(baseId, documentId)}/refresh`)).status).toBe(202);
    const blocked = await eventually(async () => {
      // Asked on another connection: a transaction sees one snapshot of pg_stat_activity.
      const [rows] = await h.db.sequelize.query(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO knowledge_words%'`,
      );
      return rows[0] as { pid: number } | undefined;
    }, 30_000);
    expect((await h.request('GET', documentPath(baseId, documentId))).body).toMatchObject({ status: 'processing', stage: 'indexing', progress: 80, chunk_count: V1_SECTIONS });
    // Mid-transaction, every other session still sees v1 whole.
    expect(await chunksOf(documentId)).toEqual(v1);
    expect(await searchDocuments(baseId, 'copper lantern')).toEqual([]);

    await killHard(worker);
    await lock.query('COMMIT');
    // The killed worker's transaction can never commit (its COMMIT would come from a dead
    // process): once its backend reads the closed socket it ends, and the transaction is undone.
    await eventually(async () => (await h.db.sequelize.query('SELECT 1 FROM pg_stat_activity WHERE pid = :pid', { replacements: { pid: blocked.pid } }))[0].length === 0, 30_000);
  } finally {
    await lock.end();
  }
  expect(await chunksOf(documentId)).toEqual(v1);
  expect(await searchDocuments(baseId, 'walnut ledger')).toHaveLength(3);

  worker = await newWorker();
  const second = await ready(baseId, documentId);
  expect(second).toMatchObject({ progress: 100, chunk_count: V2_SECTIONS, error: null });
  const v2 = await chunksOf(documentId);
  expect(v2.map((c) => c.position)).toEqual(Array.from({ length: V2_SECTIONS }, (_, i) => i));
  expect(v2.every((c) => c.content.includes('copper lantern'))).toBe(true);
  expect(v2.map((c) => c.id)).not.toEqual(expect.arrayContaining([v1[0]!.id]));
  expect(await searchDocuments(baseId, 'walnut ledger')).toEqual([]);
  expect((await searchDocuments(baseId, 'copper lantern number 117'))[0]).toContain('Entry 117:');
  const [{ n }] = (await h.db.sequelize.query(`SELECT count(*)::int AS n FROM knowledge_chunks WHERE knowledge_base_id = :baseId`, { replacements: { baseId } }))[0] as any[];
  expect(n).toBe(V2_SECTIONS);
}, 240_000);
