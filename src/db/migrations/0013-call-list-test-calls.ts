/**
 * The call list leaves out the calls of agent test runs (`(metadata->>'test_run_id') IS NULL`,
 * docs/agent-tests.md). PostgreSQL has no statistics for that expression and guessed it kept
 * 0.5 % of the calls, so it stopped using migration 0007's verdict indexes (a parallel scan of the
 * table instead of an index-only scan: 20 ms became 70+ ms at a million calls). The verdict indexes
 * now carry the same condition in their predicate: the planner proves they apply, and a count
 * reads the index alone again. Lists with `include_tests=true` (rare) do without them.
 */
import type { QueryInterface } from 'sequelize';

const NOT_A_TEST = `(metadata->>'test_run_id') IS NULL`;

async function verdictIndexes(qi: QueryInterface, predicate: string): Promise<void> {
  await qi.sequelize.query('DROP INDEX IF EXISTS calls_analysis_success');
  await qi.sequelize.query('DROP INDEX IF EXISTS calls_agent_analysis_success');
  await qi.sequelize.query(`CREATE INDEX calls_analysis_success ON calls (analysis_success, created_at DESC, id DESC) WHERE ${predicate}`);
  await qi.sequelize.query(
    `CREATE INDEX calls_agent_analysis_success ON calls (agent_name, analysis_success, created_at DESC, id DESC) WHERE ${predicate}`,
  );
}

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await verdictIndexes(qi, `analysis_success IS NOT NULL AND ${NOT_A_TEST}`);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await verdictIndexes(qi, 'analysis_success IS NOT NULL');
}
