/**
 * Agent test cases: stored per agent, validated for their kind, and turned into the spec a run
 * works on. A replay test is made from a recorded call and carries that call's turns with it.
 */
import { UniqueConstraintError, type Transaction } from 'sequelize';
import { plain, plainAll, type Database } from '../../db/database';
import type { AgentTestRow } from '../../db/models';
import { apiTimestamp } from '../../shared/time';
import { recordingOf, REPLAY_DEFAULT_EXPECTATIONS } from '../../agent-tests/replay';
import type { Expectation, Recording, TestCaseSpec, TestKind } from '../../../workflows/test-definitions';
import { conflict, notFound, unprocessable } from '../errors';
import type { TestCreate, TestPatch } from '../schemas/agent-test';
import { findAgent } from '../agents/agent-rows';

export const DEFAULT_MAX_TURNS = 10;

export function testJson(row: AgentTestRow) {
  return {
    id: row.id,
    agent_id: row.agent_id,
    name: row.name,
    kind: row.kind,
    persona: row.persona,
    script: row.script,
    custom_parameters: row.custom_parameters,
    max_turns: row.max_turns,
    expectations: row.expectations as Expectation[],
    judge: row.judge,
    tool_mocks: row.tool_mocks,
    pass_threshold: row.pass_threshold,
    source_call_id: row.source_call_id,
    recording: row.recording as Recording | null,
    created_at: apiTimestamp(row.created_at)!,
    updated_at: apiTimestamp(row.updated_at)!,
  };
}

export function testSpec(row: AgentTestRow): TestCaseSpec {
  const { id, name, kind, persona, script, custom_parameters, max_turns, judge, tool_mocks, pass_threshold } = row;
  return { id, name, kind, persona, script, custom_parameters, max_turns, judge, tool_mocks, pass_threshold, expectations: row.expectations as Expectation[], recording: row.recording as Recording | null };
}

const nameTaken = (name: string) => conflict(`This agent already has a test named "${name}"`);

/** What a test of each kind must have, checked on the stored result of a create or an update. */
function assertConsistent(t: Pick<AgentTestRow, 'kind' | 'persona' | 'script' | 'expectations' | 'recording'>): void {
  if (t.kind === 'simulated' && !t.persona) throw unprocessable('persona', 'is required for a simulated test');
  if (t.kind === 'scripted' && !t.script.length) throw unprocessable('script', 'needs at least one caller utterance');
  if (t.kind !== 'replay' && (t.expectations as Expectation[]).some((e) => e.type.startsWith('same_'))) {
    throw unprocessable('expectations', 'same_tools, same_nodes and same_end need a recorded call (replay tests only)');
  }
}

async function findTest(db: Database, agentId: string, testId: string, transaction?: Transaction): Promise<AgentTestRow> {
  const row = plain(await db.models.AgentTest.findOne({ where: { id: testId, agent_id: agentId }, transaction }));
  if (!row) throw notFound('Test');
  return row;
}

async function insert(db: Database, values: Partial<AgentTestRow>, transaction?: Transaction): Promise<AgentTestRow> {
  try {
    return plain(await db.models.AgentTest.create(values, { transaction }));
  } catch (err) {
    if (err instanceof UniqueConstraintError) throw nameTaken(values.name!);
    throw err;
  }
}

export async function listTests(db: Database, agentId: string) {
  await findAgent(db, agentId);
  return plainAll(await db.models.AgentTest.findAll({ where: { agent_id: agentId }, order: [['name', 'ASC']] })).map(testJson);
}

export async function getTest(db: Database, agentId: string, testId: string) {
  return testJson(await findTest(db, agentId, testId));
}

/** A test from the API or a bundle; `recording` only for replay tests in a bundle. */
export type NewTest = Omit<TestCreate, 'kind'> & { kind: TestKind; recording?: Recording | null; source_call_id?: string | null };

export async function createTest(db: Database, agentId: string, test: NewTest, transaction?: Transaction) {
  const values: Partial<AgentTestRow> = {
    agent_id: agentId,
    name: test.name,
    kind: test.kind,
    persona: test.persona ?? null,
    script: test.script ?? [],
    custom_parameters: test.custom_parameters ?? {},
    max_turns: test.max_turns ?? DEFAULT_MAX_TURNS,
    expectations: test.expectations ?? [],
    judge: test.judge ?? [],
    tool_mocks: test.tool_mocks ?? {},
    pass_threshold: test.pass_threshold ?? 1,
    source_call_id: test.source_call_id ?? null,
    recording: test.recording ?? null,
  };
  if (values.kind === 'replay' && !values.recording) throw unprocessable('recording', 'a replay test needs its recorded call');
  assertConsistent(values as AgentTestRow);
  return testJson(await insert(db, values, transaction));
}

export async function updateTest(db: Database, agentId: string, testId: string, patch: TestPatch) {
  return db.sequelize.transaction(async (transaction) => {
    const current = await findTest(db, agentId, testId, transaction);
    if (current.kind === 'replay' && (patch.script !== undefined || patch.persona)) {
      throw unprocessable(patch.script !== undefined ? 'script' : 'persona', 'a replay test replays its recorded call');
    }
    const changes = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<AgentTestRow>;
    assertConsistent({ ...current, ...changes });
    try {
      await db.models.AgentTest.update(changes, { where: { id: testId }, transaction });
    } catch (err) {
      if (err instanceof UniqueConstraintError) throw nameTaken(changes.name!);
      throw err;
    }
    return testJson(await findTest(db, agentId, testId, transaction));
  });
}

export async function deleteTest(db: Database, agentId: string, testId: string) {
  await findTest(db, agentId, testId);
  await db.models.AgentTest.destroy({ where: { id: testId } });
}

/** A replay test of a finished call of this agent: its caller turns, replies, tools and end. */
export async function testFromCall(
  db: Database,
  agentId: string,
  callId: string,
  options: { name?: string; judge?: string[]; expectations?: Expectation[]; pass_threshold?: number },
) {
  await findAgent(db, agentId);
  const call = plain(await db.models.Call.findByPk(callId));
  if (!call) throw notFound('Call');
  if (call.agent_id !== agentId) throw unprocessable('call_id', `the call was handled by agent "${call.agent_name}", not this one`);
  if (!['completed', 'failed'].includes(call.status)) throw conflict(`The call is ${call.status}; only a finished call can be replayed`);
  const events = plainAll(await db.models.CallEvent.findAll({ where: { call_id: callId }, order: [['seq', 'ASC']] }));
  const recording = recordingOf(call, events);
  if (!recording.turns.some((t) => t.caller !== null)) throw unprocessable('call_id', 'the caller never spoke in this call: there is nothing to replay');
  const context = Object.fromEntries(Object.entries(call.context ?? {}).filter(([k]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)));
  return createTest(db, agentId, {
    kind: 'replay',
    name: options.name ?? `Replay of call ${callId.slice(0, 8)}`,
    custom_parameters: context,
    expectations: options.expectations ?? REPLAY_DEFAULT_EXPECTATIONS,
    judge: options.judge ?? [],
    pass_threshold: options.pass_threshold ?? 1,
    recording,
    source_call_id: callId,
  });
}
