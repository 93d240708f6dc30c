/**
 * Agent tests (docs/agent-tests.md): the stored versions of each agent (the snapshot a call runs
 * on, kept per version so a test run can use any of them), test cases per agent, test runs and
 * the result of every attempt of a run.
 */
import { DataTypes, type QueryInterface } from 'sequelize';

const id = { type: DataTypes.UUID, primaryKey: true, allowNull: false };
const timestamps = {
  created_at: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
  updated_at: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
};
const json = (defaultValue: unknown) => ({ type: DataTypes.JSONB, allowNull: false, defaultValue });
const agentRef = { type: DataTypes.UUID, allowNull: false, references: { model: 'agents', key: 'id' }, onDelete: 'CASCADE' };

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable('agent_versions', {
    agent_id: { ...agentRef, primaryKey: true },
    version: { type: DataTypes.INTEGER, allowNull: false, primaryKey: true },
    snapshot: { type: DataTypes.JSONB, allowNull: false },
    created_at: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
  });

  await qi.createTable('agent_tests', {
    id,
    agent_id: agentRef,
    name: { type: DataTypes.TEXT, allowNull: false },
    kind: { type: DataTypes.TEXT, allowNull: false },
    persona: { type: DataTypes.TEXT, allowNull: true },
    script: json([]),
    custom_parameters: json({}),
    max_turns: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 10 },
    expectations: json([]),
    judge: json([]),
    tool_mocks: json({}),
    pass_threshold: { type: DataTypes.DOUBLE, allowNull: false, defaultValue: 1 },
    source_call_id: { type: DataTypes.UUID, allowNull: true },
    recording: { type: DataTypes.JSONB, allowNull: true },
    ...timestamps,
  });
  await qi.addIndex('agent_tests', ['agent_id', 'name'], { unique: true });

  await qi.createTable('agent_test_runs', {
    id,
    agent_id: agentRef,
    agent_version: { type: DataTypes.INTEGER, allowNull: false },
    compare_version: { type: DataTypes.INTEGER, allowNull: true },
    test_ids: json([]),
    tests: json([]),
    repeat: { type: DataTypes.INTEGER, allowNull: false },
    concurrency: { type: DataTypes.INTEGER, allowNull: false },
    status: { type: DataTypes.TEXT, allowNull: false },
    error: { type: DataTypes.TEXT, allowNull: true },
    workflow_id: { type: DataTypes.TEXT, allowNull: false },
    created_by: { type: DataTypes.UUID, allowNull: true },
    finished_at: { type: DataTypes.DATE, allowNull: true },
    ...timestamps,
  });
  await qi.addIndex('agent_test_runs', ['agent_id', 'created_at']);

  await qi.createTable('agent_test_attempts', {
    run_id: { type: DataTypes.UUID, allowNull: false, primaryKey: true, references: { model: 'agent_test_runs', key: 'id' }, onDelete: 'CASCADE' },
    test_id: { type: DataTypes.UUID, allowNull: false, primaryKey: true },
    version: { type: DataTypes.INTEGER, allowNull: false, primaryKey: true },
    attempt: { type: DataTypes.INTEGER, allowNull: false, primaryKey: true },
    call_id: { type: DataTypes.UUID, allowNull: true },
    status: { type: DataTypes.TEXT, allowNull: false },
    passed: { type: DataTypes.BOOLEAN, allowNull: true },
    result: json({}),
    ...timestamps,
  });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('agent_test_attempts');
  await qi.dropTable('agent_test_runs');
  await qi.dropTable('agent_tests');
  await qi.dropTable('agent_versions');
}
