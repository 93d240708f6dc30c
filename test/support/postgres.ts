/**
 * PostgreSQL for tests: TEST_DATABASE_URL, DATABASE_URL, or the local server at
 * 127.0.0.1:5432 (database `test`); when none answers, an embedded PostgreSQL in a temp dir.
 * Each test file gets its own database cloned from a migrated template, so files cannot interfere.
 */
import crypto from 'node:crypto';
import { Client } from 'pg';

export const DEFAULT_TEST_PG = 'postgres://postgres@127.0.0.1:5432/test';

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export async function canConnect(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

export async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Clones the template prepared by global setup into a fresh database; returns its URL. */
export async function cloneTestDatabase(): Promise<string> {
  const base = process.env.VAP_TEST_PG_URL!;
  const template = process.env.VAP_TEST_TEMPLATE_DB!;
  const name = `${template}_${crypto.randomBytes(4).toString('hex')}`;
  await adminQuery(base, `CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  return withDatabase(base, name);
}
