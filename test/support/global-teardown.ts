import fs from 'node:fs';
import { Client } from 'pg';

export default async function globalTeardown(): Promise<void> {
  const state = (globalThis as Record<string, any>).__VAP_TEST__;
  // Named by several projects, so called once per project: the first call stops everything.
  if (!state) return;
  delete (globalThis as Record<string, any>).__VAP_TEST__;
  const base = process.env.VAP_TEST_PG_URL;
  const template = process.env.VAP_TEST_TEMPLATE_DB;
  if (base && template) {
    const client = new Client({ connectionString: base });
    await client.connect();
    // The template and its clones (`<template>_…`), not another run's whose pid starts the same.
    const { rows } = await client.query("SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2", [template, `${template}\\_%`]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    await client.end();
  }
  await state.stopTemporal?.();
  await state.stopPostgres?.();
  if (state.tmp) fs.rmSync(state.tmp, { recursive: true, force: true });
}
