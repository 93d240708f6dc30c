/**
 * GET /api/calls?end_reason=… (how calls ended: transferred, voicemail, error …) had no index: the
 * planner walked the calls newest first and kept the matching ones, so a page of a rare reason
 * read most of the table (docs/post-call-analysis.md, "Measured on 1,000,000 calls"). The index
 * has the list's order after the reason, and the list's test-call condition in its predicate
 * (as migration 0013's): a page and the capped count read the index alone.
 */
import type { QueryInterface } from 'sequelize';

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query(
    `CREATE INDEX IF NOT EXISTS calls_end_reason ON calls (end_reason, created_at DESC, id DESC) WHERE end_reason IS NOT NULL AND (metadata->>'test_run_id') IS NULL`,
  );
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP INDEX IF EXISTS calls_end_reason');
}
