/**
 * The cost of semantic ranking without pgvector (docs/knowledge-base.md, "Semantic search"): a
 * scratch database on the PostgreSQL at DATABASE_URL (default postgres://postgres@127.0.0.1:5432),
 * migrated, with one base of N chunks whose embeddings are seeded random unit vectors of D
 * dimensions, then 30 (--runs) rankings of a random query vector (the exact scan a search runs, `real[]`
 * or pgvector's `vector`, whichever the migration chose) and as many hybrid searches through the
 * retriever calls use, its query embedded by the embeddings fake over HTTP.
 *
 *   npx tsx scripts/bench-knowledge-semantic.ts [--sizes 1000,10000] [--dims 256,1536] [--runs 30]
 */
import { randomUUID } from 'node:crypto';
import { replaceChunks } from '../src/knowledge/chunk-store';
import { estimateTokens, type Chunk } from '../src/knowledge/chunking';
import { createKnowledgeRetriever } from '../src/knowledge/retrieval';
import { embeddingColumn, semanticRanking } from '../src/knowledge/semantic';
import { normalise } from '../src/knowledge/vectors';
import { EMBEDDINGS_VENDOR } from '../src/providers/embeddings/registry';
import { startFakeEmbeddings } from '../test/fakes/embeddings-server';
import { percentile, random, withScratchDatabase } from './lib/knowledge-bench-kit';

let RUNS = 30;
const WORDS = 'price doctor parking refund delivery courier opening hours weekend garage consultation fee pets cancel invoice roaming'.split(' ');

const summary = (times: number[]) => {
  const s = [...times].sort((a, b) => a - b);
  return `p50 ${percentile(s, 50).toFixed(1)} ms, p95 ${percentile(s, 95).toFixed(1)} ms, max ${s[s.length - 1]!.toFixed(1)} ms`;
};

async function run(adminUrl: string, size: number, dims: number, embeddingsUrl: string): Promise<void> {
  const name = `kb_sem_bench_${process.pid}_${size}_${dims}`;
  await withScratchDatabase(adminUrl, name, async (db) => {
    const rand = random(size * 7 + dims);
    const vector = () => normalise(Array.from({ length: dims }, () => rand() * 2 - 1));
    const base = await db.models.KnowledgeBase.create({ id: randomUUID(), name: 'bench', language: 'en', ts_config: 'english', description: '' });
    const doc = await db.models.KnowledgeDocument.create({ id: randomUUID(), knowledge_base_id: base.get('id') as string, name: 'bench.txt', source: 'upload', kind: 'text', status: 'processing' });
    const chunks: Chunk[] = Array.from({ length: size }, (_, position) => {
      const content = Array.from({ length: 60 }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
      return { position, heading: 'Bench', content, tokens: estimateTokens(content) };
    });
    const started = performance.now();
    await replaceChunks(db, doc.get('id') as string, chunks, { model: 'fake-embed-1', vectors: chunks.map(vector) });
    const indexS = (performance.now() - started) / 1000;
    const column = await embeddingColumn(db);
    const ids = [base.get('id') as string];
    const ranking: number[] = [];
    for (let i = 0; i <= RUNS; i++) {
      const q = vector();
      const t = performance.now();
      await semanticRanking(db, column, { knowledgeBaseIds: ids, model: 'fake-embed-1', vector: q, limit: 16, minSimilarity: -1 });
      if (i > 0) ranking.push(performance.now() - t); // the first warms the cache
    }
    const embedder = EMBEDDINGS_VENDOR.create({ baseUrl: embeddingsUrl, model: 'fake-embed-1', dimensions: dims, batchSize: 64, timeoutMs: 60_000, minSimilarity: -1 });
    const retriever = createKnowledgeRetriever(db, embedder);
    const hybrid: number[] = [];
    for (let i = 0; i <= RUNS; i++) {
      const query = Array.from({ length: 5 }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
      const t = performance.now();
      const result = await retriever.search({ knowledgeBaseIds: ids, query, topK: 4 });
      if (result.method !== 'hybrid') throw new Error(`the search went ${result.method}: ${result.semanticError}`);
      if (i > 0) hybrid.push(performance.now() - t);
    }
    console.log(`${size} chunks × ${dims} dims (${column}, indexed in ${indexS.toFixed(1)} s): semantic ranking ${summary(ranking)}; hybrid search ${summary(hybrid)}`);
  });
}

async function main(): Promise<void> {
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const arg = (flag: string, fallback: string) => (process.argv.indexOf(flag) > 0 ? process.argv[process.argv.indexOf(flag) + 1]! : fallback).split(',').map(Number);
  RUNS = arg('--runs', String(RUNS))[0]!;
  const fake = await startFakeEmbeddings();
  try {
    for (const dims of arg('--dims', '256,1536')) for (const size of arg('--sizes', '1000,10000')) await run(adminUrl, size, dims, fake.url);
  } finally {
    await fake.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
