/**
 * Test runs: starting the run workflow on the chosen agent versions, and the run as the API shows
 * it — progress while it runs, then per test the pass rate over the repeats (per version) and
 * every attempt's expectations, verdicts, transcript, tool calls, token usage and replay diff.
 */
import crypto from 'node:crypto';
import { Op } from 'sequelize';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Config } from '../../config';
import { plain, plainAll, type Database } from '../../db/database';
import type { AgentTestAttemptRow, AgentTestRunRow } from '../../db/models';
import { DEFAULT_LLM_MODEL } from '../../shared/catalog';
import { apiTimestamp } from '../../shared/time';
import { agentVersionSnapshot, UnknownVersion } from '../../agent-tests/versions';
import { workflowOptions } from '../../calls/call-service';
import { testRunWorkflowId, type SimulatorLlm, type TestRunInput } from '../../../workflows/test-definitions';
import { conflict, HttpError, notFound, unprocessable } from '../errors';
import { findAgent } from '../agents/agent-rows';
import { testSpec } from './test-service';

export const DEFAULT_RUN_CONCURRENCY = 2;
// One run is one workflow history: each attempt adds a few events to it, and a history is capped.
export const MAX_ATTEMPTS_PER_RUN = 2000;

export interface RunRequest {
  test_ids?: string[];
  agent_version?: number;
  compare_version?: number;
  repeat: number;
  concurrency?: number;
}

export interface RunDeps {
  config: Config;
  db: Database;
  temporal: Client;
}

function simulatorLlm(config: Config): SimulatorLlm | null {
  const provider = config.AGENT_TEST_LLM_PROVIDER;
  return provider ? { provider, model: config.AGENT_TEST_LLM_MODEL ?? DEFAULT_LLM_MODEL[provider] } : null;
}

async function snapshotOf(db: Database, agentId: string, version: number | undefined, field: string) {
  try {
    return await agentVersionSnapshot(db, agentId, version);
  } catch (err) {
    if (err instanceof UnknownVersion) throw unprocessable(field, err.message);
    throw err;
  }
}

export async function startRun(deps: RunDeps, agentId: string, req: RunRequest, userId: string) {
  const { db, config, temporal } = deps;
  await findAgent(db, agentId);
  const all = plainAll(await db.models.AgentTest.findAll({ where: { agent_id: agentId }, order: [['name', 'ASC']] }));
  const tests = req.test_ids ? all.filter((t) => req.test_ids!.includes(t.id)) : all;
  const unknown = (req.test_ids ?? []).filter((id) => !all.some((t) => t.id === id));
  if (unknown.length) throw unprocessable('test_ids', `not tests of this agent: ${unknown.join(', ')}`);
  if (!tests.length) throw unprocessable('test_ids', 'this agent has no tests to run');
  const concurrency = req.concurrency ?? Math.min(DEFAULT_RUN_CONCURRENCY, config.AGENT_TEST_MAX_CONCURRENCY);
  if (concurrency > config.AGENT_TEST_MAX_CONCURRENCY) throw unprocessable('concurrency', `at most ${config.AGENT_TEST_MAX_CONCURRENCY} (AGENT_TEST_MAX_CONCURRENCY)`);
  const primary = await snapshotOf(db, agentId, req.agent_version, 'agent_version');
  if (req.compare_version !== undefined && req.compare_version === primary.version) throw unprocessable('compare_version', 'is the version under test');
  const agents = [primary];
  if (req.compare_version !== undefined) agents.push(await snapshotOf(db, agentId, req.compare_version, 'compare_version'));
  const attempts = tests.length * req.repeat * agents.length;
  if (attempts > MAX_ATTEMPTS_PER_RUN) throw unprocessable('repeat', `${attempts} conversations in one run; at most ${MAX_ATTEMPTS_PER_RUN} (tests × repeat × versions)`);

  const runId = crypto.randomUUID();
  const workflowId = testRunWorkflowId(runId);
  await db.models.AgentTestRun.create({
    id: runId,
    agent_id: agentId,
    agent_version: primary.version,
    compare_version: req.compare_version ?? null,
    test_ids: tests.map((t) => t.id),
    tests: tests.map((t) => ({ id: t.id, name: t.name, kind: t.kind, pass_threshold: t.pass_threshold })),
    repeat: req.repeat,
    concurrency,
    status: 'running',
    workflow_id: workflowId,
    created_by: userId,
  });
  const input: TestRunInput = {
    runId,
    agents,
    tests: tests.map(testSpec),
    repeat: req.repeat,
    concurrency,
    options: workflowOptions(config),
    simulator: simulatorLlm(config),
  };
  try {
    await temporal.workflow.start('testRunWorkflow', {
      workflowId,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      args: [input],
      staticSummary: `agent tests · ${primary.name} v${primary.version} · ${tests.length} tests × ${req.repeat}`,
    });
  } catch (err) {
    const message = `Could not start the test run workflow: ${(err as Error).message}`;
    await db.models.AgentTestRun.update({ status: 'failed', error: message, finished_at: new Date() }, { where: { id: runId } });
    throw new HttpError(503, message);
  }
  return getRun(db, runId);
}

const usageOf = (a: AgentTestAttemptRow) => {
  const u = (a.result.usage ?? {}) as Record<string, { prompt_tokens: number; completion_tokens: number } | undefined>;
  const parts = [u.agent, u.simulator, u.judge].filter((p) => p !== undefined);
  return {
    prompt_tokens: parts.reduce((n, p) => n + p.prompt_tokens, 0),
    completion_tokens: parts.reduce((n, p) => n + p.completion_tokens, 0),
  };
};

const attemptJson = (a: AgentTestAttemptRow) => ({ attempt: a.attempt, version: a.version, status: a.status, passed: a.passed, call_id: a.call_id, result: a.result });

function runJson(run: AgentTestRunRow, attempts: AgentTestAttemptRow[], options: { attempts: boolean }) {
  const versions = [run.agent_version, ...(run.compare_version === null ? [] : [run.compare_version])];
  const finished = (a: AgentTestAttemptRow) => a.status !== 'running';
  const unmockedIn = (list: AgentTestAttemptRow[]) => [...new Set(list.flatMap((a) => (a.result.unmocked_tools as string[] | undefined) ?? []))];
  const tests = run.tests.map((t) => {
    const mine = attempts.filter((a) => a.test_id === t.id);
    const results = versions.map((version) => {
      const done = mine.filter((a) => a.version === version && finished(a));
      const passed = done.filter((a) => a.passed).length;
      const rate = done.length ? passed / done.length : null;
      return {
        version,
        attempts: done.length,
        passed_attempts: passed,
        pass_rate: rate,
        passed: done.length < run.repeat ? null : rate! >= t.pass_threshold - 1e-9,
        unmocked_tools: unmockedIn(done),
        usage: done.map(usageOf).reduce((s, u) => ({ prompt_tokens: s.prompt_tokens + u.prompt_tokens, completion_tokens: s.completion_tokens + u.completion_tokens }), { prompt_tokens: 0, completion_tokens: 0 }),
      };
    });
    const sorted = [...mine].sort((a, b) => a.version - b.version || a.attempt - b.attempt);
    return { test_id: t.id, name: t.name, kind: t.kind, pass_threshold: t.pass_threshold, results, ...(options.attempts ? { attempts: sorted.map(attemptJson) } : {}) };
  });
  const done = attempts.filter(finished);
  const primaryResults = tests.map((t) => t.results[0]!.passed);
  return {
    id: run.id,
    agent_id: run.agent_id,
    agent_version: run.agent_version,
    compare_version: run.compare_version,
    status: run.status,
    error: run.error,
    repeat: run.repeat,
    concurrency: run.concurrency,
    created_at: apiTimestamp(run.created_at)!,
    finished_at: apiTimestamp(run.finished_at),
    progress: {
      total: run.tests.length * run.repeat * versions.length,
      done: done.length,
      running: attempts.length - done.length,
      passed: done.filter((a) => a.passed).length,
      failed: done.filter((a) => !a.passed).length,
    },
    passed: run.status === 'running' || primaryResults.includes(null) ? null : primaryResults.every(Boolean),
    unmocked_tools: unmockedIn(done),
    tests,
  };
}

async function findRun(db: Database, runId: string): Promise<AgentTestRunRow> {
  const run = plain(await db.models.AgentTestRun.findByPk(runId));
  if (!run) throw notFound('Test run');
  return run;
}

export async function getRun(db: Database, runId: string) {
  const run = await findRun(db, runId);
  const attempts = plainAll(await db.models.AgentTestAttempt.findAll({ where: { run_id: runId } }));
  return runJson(run, attempts, { attempts: true });
}

export async function listRuns(db: Database, agentId: string, limit: number) {
  await findAgent(db, agentId);
  const runs = plainAll(await db.models.AgentTestRun.findAll({ where: { agent_id: agentId }, order: [['created_at', 'DESC']], limit }));
  const attempts = runs.length
    ? plainAll(await db.models.AgentTestAttempt.findAll({ where: { run_id: { [Op.in]: runs.map((r) => r.id) } }, attributes: { exclude: ['result'] } }))
    : [];
  return runs.map((run) => runJson(run, attempts.filter((a) => a.run_id === run.id).map((a) => ({ ...a, result: {} })), { attempts: false }));
}

/** Cancels a running run: attempts in progress end (their calls too); finished ones are kept. */
export async function cancelRun(deps: RunDeps, runId: string) {
  const run = await findRun(deps.db, runId);
  if (run.status !== 'running') throw conflict(`The run is ${run.status}`);
  try {
    const handle = deps.temporal.workflow.getHandle(run.workflow_id);
    await handle.cancel();
    await handle.result().catch(() => undefined);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
  await deps.db.models.AgentTestRun.update({ status: 'canceled', finished_at: new Date() }, { where: { id: runId, status: 'running' } });
  return getRun(deps.db, runId);
}
