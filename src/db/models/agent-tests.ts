import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import { jsonb, modelOptions, nullableText, requiredText, uuidPk, type Timestamps } from './common';

/** One stored version of an agent: the snapshot calls of that version run on (call-definitions.ts). */
export interface AgentVersionRow {
  agent_id: string;
  version: number;
  snapshot: Record<string, unknown>;
  created_at: Date;
}

export type AgentTestKind = 'simulated' | 'scripted' | 'replay';

export interface AgentTestRow extends Timestamps {
  id: string;
  agent_id: string;
  name: string;
  kind: AgentTestKind;
  persona: string | null;
  script: string[];
  custom_parameters: Record<string, string | number>;
  max_turns: number;
  expectations: unknown[];
  judge: string[];
  tool_mocks: Record<string, unknown[]>;
  pass_threshold: number;
  source_call_id: string | null;
  /** Replay tests: what the recorded call said and did, turn by turn (agent-tests/recording.ts). */
  recording: unknown | null;
}

export type TestRunStatus = 'running' | 'completed' | 'failed' | 'canceled';

export interface AgentTestRunRow extends Timestamps {
  id: string;
  agent_id: string;
  agent_version: number;
  compare_version: number | null;
  test_ids: string[];
  /** The test cases as they were when the run started: { id, name, kind, pass_threshold }. */
  tests: Array<{ id: string; name: string; kind: AgentTestKind; pass_threshold: number }>;
  repeat: number;
  concurrency: number;
  status: TestRunStatus;
  error: string | null;
  workflow_id: string;
  created_by: string | null;
  finished_at: Date | null;
}

export interface AgentTestAttemptRow extends Timestamps {
  run_id: string;
  test_id: string;
  version: number;
  attempt: number;
  call_id: string | null;
  status: 'running' | 'done' | 'error';
  passed: boolean | null;
  result: Record<string, unknown>;
}

export type AgentVersionModel = ModelStatic<Model<AgentVersionRow, Partial<AgentVersionRow>>>;
export type AgentTestModel = ModelStatic<Model<AgentTestRow, Partial<AgentTestRow>>>;
export type AgentTestRunModel = ModelStatic<Model<AgentTestRunRow, Partial<AgentTestRunRow>>>;
export type AgentTestAttemptModel = ModelStatic<Model<AgentTestAttemptRow, Partial<AgentTestAttemptRow>>>;

export function defineAgentTestModels(sequelize: Sequelize) {
  const AgentVersion: AgentVersionModel = sequelize.define(
    'AgentVersion',
    {
      agent_id: { type: DataTypes.UUID, primaryKey: true },
      version: { type: DataTypes.INTEGER, primaryKey: true },
      snapshot: { type: DataTypes.JSONB, allowNull: false },
      created_at: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
    },
    { tableName: 'agent_versions', timestamps: false, underscored: true },
  );
  const AgentTest: AgentTestModel = sequelize.define(
    'AgentTest',
    {
      id: uuidPk(),
      agent_id: { type: DataTypes.UUID, allowNull: false },
      name: requiredText(),
      kind: requiredText(),
      persona: nullableText(),
      script: jsonb([]),
      custom_parameters: jsonb({}),
      max_turns: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 10 },
      expectations: jsonb([]),
      judge: jsonb([]),
      tool_mocks: jsonb({}),
      pass_threshold: { type: DataTypes.DOUBLE, allowNull: false, defaultValue: 1 },
      source_call_id: { type: DataTypes.UUID, allowNull: true },
      recording: { type: DataTypes.JSONB, allowNull: true },
    },
    { ...modelOptions, tableName: 'agent_tests' },
  );
  const AgentTestRun: AgentTestRunModel = sequelize.define(
    'AgentTestRun',
    {
      id: uuidPk(),
      agent_id: { type: DataTypes.UUID, allowNull: false },
      agent_version: { type: DataTypes.INTEGER, allowNull: false },
      compare_version: { type: DataTypes.INTEGER, allowNull: true },
      test_ids: jsonb([]),
      tests: jsonb([]),
      repeat: { type: DataTypes.INTEGER, allowNull: false },
      concurrency: { type: DataTypes.INTEGER, allowNull: false },
      status: requiredText(),
      error: nullableText(),
      workflow_id: requiredText(),
      created_by: { type: DataTypes.UUID, allowNull: true },
      finished_at: { type: DataTypes.DATE, allowNull: true },
    },
    { ...modelOptions, tableName: 'agent_test_runs' },
  );
  const AgentTestAttempt: AgentTestAttemptModel = sequelize.define(
    'AgentTestAttempt',
    {
      run_id: { type: DataTypes.UUID, primaryKey: true },
      test_id: { type: DataTypes.UUID, primaryKey: true },
      version: { type: DataTypes.INTEGER, primaryKey: true },
      attempt: { type: DataTypes.INTEGER, primaryKey: true },
      call_id: { type: DataTypes.UUID, allowNull: true },
      status: requiredText(),
      passed: { type: DataTypes.BOOLEAN, allowNull: true },
      result: jsonb({}),
    },
    { ...modelOptions, tableName: 'agent_test_attempts' },
  );
  return { AgentVersion, AgentTest, AgentTestRun, AgentTestAttempt };
}
