/**
 * A field filter with a verdict (`field.service=filling&success=false`): the count used to AND two
 * whole bitmaps, every call with that verdict (240,000 at a million calls) and every call with that
 * field value (200,000), which outgrew `work_mem` and went lossy: 166 ms. These GIN indexes hold
 * the fields of one verdict each, so the same containment test finds only the calls with both (one
 * bitmap of 60,000, ~30 ms) — and they are small (together about half the all-calls GIN), since
 * each holds only its verdict's calls. The predicates are those the list query already says
 * (call-list.ts): `analysis_success = false` reads as `NOT analysis_success` in both.
 */
import type { QueryInterface } from 'sequelize';

const NOT_A_TEST = `(metadata->>'test_run_id') IS NULL`;

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  for (const [name, verdict] of [['calls_analysis_fields_failed', 'false'], ['calls_analysis_fields_succeeded', 'true']]) {
    await qi.sequelize.query(
      `CREATE INDEX ${name} ON calls USING GIN ((analysis -> 'fields') jsonb_path_ops) WHERE analysis_success = ${verdict} AND ${NOT_A_TEST}`,
    );
  }
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP INDEX IF EXISTS calls_analysis_fields_failed');
  await qi.sequelize.query('DROP INDEX IF EXISTS calls_analysis_fields_succeeded');
}
