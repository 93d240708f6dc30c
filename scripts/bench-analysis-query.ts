/**
 * Times GET /api/calls's analysis filters on a million calls: creates a scratch database
 * (`vap_bench_analysis`, dropped at the end unless --keep), migrates it, generates 1,000,000 calls
 * (80 % analysed: success 70 %, fields booked/date/service/party), vacuums, then runs the API's own
 * query (src/calls/call-list.ts: the page and the total, side by side) for each filter and prints
 * the median and worst of 10 runs, as the API runs it (total capped at 10,000) and with exact_total, and with --explain the EXPLAIN ANALYZE of both statements.
 *
 *   npx tsx scripts/bench-analysis-query.ts [--rows 1000000] [--explain] [--keep]
 *
 * PostgreSQL: BENCH_DATABASE_URL, else TEST_DATABASE_URL, DATABASE_URL or postgres://postgres@127.0.0.1:5432/test
 * (the server; the scratch database is created next to it). I/O-heavy for a minute or two, no CPU hog.
 */
import { performance } from 'node:perf_hooks';
import { Sequelize } from 'sequelize';
import { listCalls, type CallListFilters } from '../src/calls/call-list';
import type { Database } from '../src/db/database';
import { migrate } from '../src/db/migrate';
import { defineModels } from '../src/db/models';
import { adminQuery, DEFAULT_TEST_PG, withDatabase } from '../test/support/postgres';
import { runScript } from './lib/run-script';

const SCRATCH = 'vap_bench_analysis';
const BATCH_ROWS = 100_000;
const RUNS = 10;
const PAGE = { limit: 20, offset: 0 };

const arg = (name: string) => process.argv.indexOf(name);
const rows = arg('--rows') > 0 ? Number(process.argv[arg('--rows') + 1]) : 1_000_000;
const explain = arg('--explain') > 0;
const keep = arg('--keep') > 0;

/** What the dashboard and a CRM integration ask: failures, a verdict per agent, a field's value. */
const QUERIES: Array<{ name: string; filters: CallListFilters }> = [
  { name: 'success=false', filters: { success: false } },
  { name: 'success=true', filters: { success: true } },
  { name: 'agent_name=agent-07&success=false', filters: { agent_name: 'agent-07', success: false } },
  { name: 'field.date=2026-12-03', filters: { fields: { date: '2026-12-03' } } },
  { name: 'field.service=filling&success=false', filters: { success: false, fields: { service: 'filling' } } },
  { name: 'field.booked=true', filters: { fields: { booked: 'true' } } },
  { name: 'field.booked=true&field.date=2026-12-03', filters: { fields: { booked: 'true', date: '2026-12-03' } } },
  { name: 'end_reason=error', filters: { end_reason: 'error' } },
  { name: 'end_reason=transferred (none)', filters: { end_reason: 'transferred' } },
  { name: '(no filter, for comparison)', filters: {} },
];

/** One batch of generated calls, seeded so every run sees the same table. */
function insertBatch(from: number, to: number): string {
  return `
    WITH raw AS (
      SELECT g, gen_random_uuid() AS id, random() AS r_status, random() AS r_success, random() AS r_booked,
             random() AS r_day, random() AS r_service, random() AS r_party,
             timestamp '2026-12-01' - random() * interval '365 days' AS created
      FROM generate_series(${from}, ${to}) AS g
    ), shaped AS (
      SELECT *, CASE WHEN r_status < 0.85 THEN 'completed' WHEN r_status < 0.90 THEN 'failed' ELSE 'no_answer' END AS st,
             r_status < 0.80 AS analysed, r_success < 0.7 AS success
      FROM raw
    ), outcome AS (
      SELECT *, success OR r_booked < 0.1 AS booked,
             (ARRAY['checkup', 'cleaning', 'filling', 'consultation'])[1 + floor(r_service * 4)::int] AS service
      FROM shaped
    )
    INSERT INTO calls (id, agent_id, agent_name, agent_version, phone_number, direction, status, provider, provider_call_sid,
      workflow_id, start_time, end_time, duration, end_reason, llm_prompt_tokens, llm_completion_tokens, tts_characters,
      metadata, context, created_at, updated_at, channel, analysis_status, analysis, analysis_success,
      analysis_prompt_tokens, analysis_completion_tokens)
    SELECT id, NULL, 'agent-' || lpad((g % 20)::text, 2, '0'), 1, '+1415555' || lpad((g % 10000)::text, 4, '0'),
      CASE WHEN g % 3 = 0 THEN 'outbound' ELSE 'inbound' END, st, 'twilio', 'CA' || md5(g::text), 'call-' || id,
      created, created + interval '95 seconds', 95, CASE st WHEN 'failed' THEN 'error' WHEN 'completed' THEN 'user_ended' END,
      1200, 180, 900, '{}'::jsonb, jsonb_build_object('first_name', 'Asha'), created, created, 'voice',
      CASE WHEN analysed THEN 'done' END,
      CASE WHEN analysed THEN jsonb_build_object(
        'summary', 'The caller asked about an appointment and the agent offered the next free slots.',
        'fields', jsonb_build_object('booked', booked,
          'date', CASE WHEN booked THEN to_char(date '2026-01-01' + floor(r_day * 365)::int, 'YYYY-MM-DD') END,
          'service', service, 'party', 1 + floor(r_party * 4)::int),
        'success', success, 'success_reason', CASE WHEN success THEN 'An appointment was booked.' ELSE 'Nothing was booked.' END,
        'model', 'gpt-4o-mini', 'completed_at', to_char(created + interval '2 minutes', 'YYYY-MM-DD"T"HH24:MI:SS'),
        'error', NULL, 'skipped_reason', NULL) END,
      CASE WHEN analysed THEN success END,
      CASE WHEN analysed THEN 850 ELSE 0 END, CASE WHEN analysed THEN 60 ELSE 0 END
    FROM outcome`;
}

async function generate(db: Database): Promise<void> {
  await db.sequelize.query('SELECT setseed(0.42)');
  const started = performance.now();
  for (let from = 1; from <= rows; from += BATCH_ROWS) {
    const to = Math.min(rows, from + BATCH_ROWS - 1);
    await db.sequelize.query(insertBatch(from, to));
    process.stdout.write(`\r  generated ${to.toLocaleString('en')} calls`);
  }
  console.log(` in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  await db.sequelize.query('VACUUM ANALYZE calls');
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const server = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? DEFAULT_TEST_PG;
  await adminQuery(server, `DROP DATABASE IF EXISTS ${SCRATCH}`);
  await adminQuery(server, `CREATE DATABASE ${SCRATCH}`);
  const statements: string[] = [];
  const sequelize = new Sequelize(withDatabase(server, SCRATCH), {
    dialect: 'postgres',
    pool: { max: 4 },
    // Keeps the statements the API's query issues, for EXPLAIN.
    logging: (sql) => statements.push(sql.replace(/^Executing \([^)]*\): /, '')),
  });
  const db: Database = { sequelize, models: defineModels(sequelize), close: () => sequelize.close() };
  try {
    await migrate(sequelize);
    console.log(`scratch database ${SCRATCH}: ${rows.toLocaleString('en')} calls`);
    await generate(db);
    const [[size]] = (await sequelize.query(`SELECT pg_size_pretty(pg_total_relation_size('calls')) AS total`)) as [Array<{ total: string }>, unknown];
    console.log(`  table with indexes: ${size!.total}\n`);
    console.log('query (page of 20 + total)                     matches   API (total capped at 10,000): median / worst ms   exact_total=true: median / worst ms');
    for (const q of QUERIES) {
      const capped = await time(db, q.filters, PAGE);
      const exact = await time(db, q.filters, { ...PAGE, exactTotal: true });
      const cell = (t: number[]) => `${median(t).toFixed(1)} / ${Math.max(...t).toFixed(1)}`;
      console.log(`${q.name.padEnd(46)} ${String(exact.total).padStart(8)}   ${cell(capped.timings).padStart(20)}${capped.exact ? '' : ' (capped)'}   ${cell(exact.timings).padStart(20)}`);
      if (explain) {
        statements.length = 0;
        await listCalls(db, q.filters, PAGE); // the API's statements: the page and the capped count
        for (const sql of statements.splice(0)) {
          const [plan] = (await sequelize.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql.replace(/;$/, '')}`)) as [Array<{ 'QUERY PLAN': string }>, unknown];
          console.log(`\n  ${sql}\n${plan.map((l) => `    ${l['QUERY PLAN']}`).join('\n')}\n`);
        }
      }
    }
  } finally {
    await sequelize.close();
    if (!keep) await adminQuery(server, `DROP DATABASE IF EXISTS ${SCRATCH}`);
  }
}

/** Median-worthy timings of one query as the API runs it, after a warm-up (as a busy API would be). */
async function time(db: Database, filters: CallListFilters, page: typeof PAGE & { exactTotal?: boolean }) {
  await listCalls(db, filters, page);
  const timings: number[] = [];
  let result = { total: 0, exact: true };
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const { total, totalExact } = await listCalls(db, filters, page);
    timings.push(performance.now() - t);
    result = { total, exact: totalExact };
  }
  return { ...result, timings };
}

runScript(main);
