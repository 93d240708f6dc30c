/**
 * Retrieval latency of a knowledge base (docs/knowledge-base.md, "Measured"): a scratch database
 * on the PostgreSQL at DATABASE_URL (default postgres://postgres@127.0.0.1:5432), migrated, with
 * one base of N synthetic chunks (~60 words each, drawn from a fixed vocabulary by a seeded
 * generator, so every run indexes the same text), then 200 searches of 3–8 words taken from
 * random chunks, timed through the retrieval interface calls use. Prints p50/p95/max per size.
 *
 *   npx tsx scripts/bench-knowledge.ts [--sizes 1000,100000]
 */
import { randomUUID } from 'node:crypto';
import { replaceChunks } from '../src/knowledge/chunk-store';
import { estimateTokens, type Chunk } from '../src/knowledge/chunking';
import { PostgresRetriever } from '../src/knowledge/retrieval';
import { percentile, random, withScratchDatabase } from './lib/knowledge-bench-kit';

const SEARCHES = 200;
const WORDS_PER_CHUNK = 60;

const SYLLABLES = ['ka', 'ro', 'mi', 'ten', 'sa', 'lo', 'vi', 'dur', 'pe', 'na', 'gri', 'fo', 'bel', 'tu', 'xa', 'mon'];

function vocabulary(rand: () => number, size: number): string[] {
  const words = new Set<string>();
  while (words.size < size) {
    const n = 2 + Math.floor(rand() * 3);
    words.add(Array.from({ length: n }, () => SYLLABLES[Math.floor(rand() * SYLLABLES.length)]).join(''));
  }
  return [...words];
}

async function run(adminUrl: string, size: number): Promise<void> {
  const name = `kb_bench_${process.pid}_${size}`;
  await withScratchDatabase(adminUrl, name, async (db) => {
    const rand = random(size);
    const words = vocabulary(rand, 5000);
    const pick = () => words[Math.floor(rand() * words.length)]!;
    const base = await db.models.KnowledgeBase.create({ id: randomUUID(), name: 'bench', language: 'en', ts_config: 'english', description: '' });
    const doc = await db.models.KnowledgeDocument.create({ id: randomUUID(), knowledge_base_id: base.get('id') as string, name: 'bench.txt', source: 'upload', kind: 'text', status: 'processing' });
    const chunks: Chunk[] = Array.from({ length: size }, (_, position) => {
      const content = Array.from({ length: WORDS_PER_CHUNK }, pick).join(' ');
      return { position, heading: `${pick()} > ${pick()}`, content, tokens: estimateTokens(content) };
    });
    const indexStarted = performance.now();
    await replaceChunks(db, doc.get('id') as string, chunks);
    const indexMs = performance.now() - indexStarted;
    const retriever = new PostgresRetriever(db);
    const baseIds = [base.get('id') as string];
    await retriever.search({ knowledgeBaseIds: baseIds, query: 'warm up', topK: 4 });
    const times: number[] = [];
    for (let i = 0; i < SEARCHES; i++) {
      const source = chunks[Math.floor(rand() * chunks.length)]!.content.split(' ');
      const at = Math.floor(rand() * (source.length - 8));
      const query = source.slice(at, at + 3 + Math.floor(rand() * 6)).join(' ');
      const started = performance.now();
      await retriever.search({ knowledgeBaseIds: baseIds, query, topK: 4 });
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const f = (ms: number) => `${ms.toFixed(1)} ms`;
    console.log(
      `${size} chunks (indexed in ${(indexMs / 1000).toFixed(1)} s, trigrams ${(await retriever.hasTrigram()) ? 'on' : 'off'}): ` +
        `search p50 ${f(percentile(times, 50))}, p95 ${f(percentile(times, 95))}, max ${f(times[times.length - 1]!)} over ${SEARCHES}`,
    );
  });
}

async function main(): Promise<void> {
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const arg = process.argv.indexOf('--sizes');
  const sizes = (arg > 0 ? process.argv[arg + 1]! : '1000,100000').split(',').map(Number);
  for (const size of sizes) await run(adminUrl, size);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
