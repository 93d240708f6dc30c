/**
 * What the knowledge benchmarks share (scripts/bench-knowledge*.ts): a scratch database, migrated
 * and dropped afterwards, a seeded generator so every run indexes the same text, and percentiles.
 */
import { Client } from 'pg';
import { connectDatabase, type Database } from '../../src/db/database';
import { migrate } from '../../src/db/migrate';

/** mulberry32: a small seeded generator, so the corpus is the same on every run. */
export function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/**
 * Runs `work` on a fresh migrated database `name` beside the one at `adminUrl`, then drops it
 * (unless KB_BENCH_KEEP=1: kept, to look at the plans with EXPLAIN ANALYZE).
 */
export async function withScratchDatabase(adminUrl: string, name: string, work: (db: Database) => Promise<void>): Promise<void> {
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}"`);
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = connectDatabase(url.toString());
  try {
    await migrate(db.sequelize);
    await work(db);
  } finally {
    await db.close();
    if (!process.env.KB_BENCH_KEEP) await admin.query(`DROP DATABASE IF EXISTS "${name}"`);
    await admin.end();
  }
}
