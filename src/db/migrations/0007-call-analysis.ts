/**
 * Post-call analysis: the agent setting, and on each call the result, its status, its own token
 * counts, and what the call list filters on, indexed so the filters stay fast at millions of calls:
 *
 * - `analysis_success` (boolean) with partial B-trees (analysed calls only) on (analysis_success,
 *   created_at, id) and (agent_name, analysis_success, created_at, id): `success=`, alone or with
 *   `agent_name=` (how did this agent do?), reads the newest matching page straight off the index
 *   and counts without touching the table (an index-only scan once the table is vacuumed);
 * - a GIN index (`jsonb_path_ops`, the smaller and faster class for `@>` containment) on
 *   `analysis->'fields'`: `field.<name>=<value>` is a containment test such as
 *   `analysis->'fields' @> '{"booked": true}'`, whatever the field's name.
 */
import { DataTypes, type QueryInterface } from 'sequelize';

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  // json, not jsonb: the fields keep the order the user gave them (the form, the model's schema).
  await qi.addColumn('agents', 'analysis', { type: DataTypes.JSON, allowNull: true });
  await qi.addColumn('calls', 'analysis_status', { type: DataTypes.TEXT, allowNull: true });
  await qi.addColumn('calls', 'analysis', { type: DataTypes.JSONB, allowNull: true });
  await qi.addColumn('calls', 'analysis_success', { type: DataTypes.BOOLEAN, allowNull: true });
  await qi.addColumn('calls', 'analysis_prompt_tokens', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 });
  await qi.addColumn('calls', 'analysis_completion_tokens', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 });
  // Partial: calls without a verdict are most calls of agents without analysis. The list query
  // repeats `analysis_success IS NOT NULL` so the planner can prove these indexes apply.
  await qi.sequelize.query(
    'CREATE INDEX calls_analysis_success ON calls (analysis_success, created_at DESC, id DESC) WHERE analysis_success IS NOT NULL',
  );
  await qi.sequelize.query(
    'CREATE INDEX calls_agent_analysis_success ON calls (agent_name, analysis_success, created_at DESC, id DESC) WHERE analysis_success IS NOT NULL',
  );
  await qi.sequelize.query(`CREATE INDEX calls_analysis_fields ON calls USING GIN ((analysis -> 'fields') jsonb_path_ops)`);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP INDEX IF EXISTS calls_analysis_fields');
  await qi.sequelize.query('DROP INDEX IF EXISTS calls_agent_analysis_success');
  await qi.sequelize.query('DROP INDEX IF EXISTS calls_analysis_success');
  for (const column of ['analysis_completion_tokens', 'analysis_prompt_tokens', 'analysis_success', 'analysis', 'analysis_status']) {
    await qi.removeColumn('calls', column);
  }
  await qi.removeColumn('agents', 'analysis');
}
