/**
 * Test runs (docs/agent-tests.md): an agent's tests run as a durable Temporal workflow, each test
 * `repeat` times at `concurrency` conversations at a time, against one version or two side by side.
 */
import { z } from 'zod';
import type { ApiContext } from '../context';
import { route, uuidParam } from '../route';
import { cancelRun, getRun, listRuns, startRun } from '../agent-tests/run-service';
import { RunCreateSchema, RunSchema } from '../schemas/agent-test';

const TAG = 'Agent tests';
export const RUNS_LISTED_MAX = 50;

export function testRunRoutes(ctx: ApiContext) {
  const { db } = ctx;
  const deps = { config: ctx.config, db, temporal: ctx.temporal };
  return [
    route({
      method: 'post',
      path: '/api/agents/{agent_id}/test-runs',
      operationId: 'startTestRun',
      tag: TAG,
      access: 'member',
      summary: "Run an agent's tests",
      description:
        'Starts a run workflow: each test (`test_ids`, default all) runs `repeat` times as a real text call of the agent version `agent_version` (default: current), through its LLM provider, flow and idle rules, at most `concurrency` conversations at a time. With `compare_version` every attempt also runs against that version. Tool webhooks are not called. Test calls are call records marked with `metadata.test_run_id`, left out of GET /api/calls and the statistics unless asked. Follow progress with GET /api/test-runs/{run_id}.',
      params: uuidParam('agent_id'),
      body: RunCreateSchema,
      responses: {
        201: { description: 'The run, started', schema: RunSchema },
        404: { description: 'No such agent' },
        422: { description: 'Unknown test id, no tests, a version not stored, or concurrency above the limit' },
        503: { description: 'Temporal is not reachable' },
      },
      async handler({ params, body, auth }) {
        return { status: 201, body: await startRun(deps, params.agent_id as string, body, auth.userId) };
      },
    }),
    route({
      method: 'get',
      path: '/api/agents/{agent_id}/test-runs',
      operationId: 'listTestRuns',
      tag: TAG,
      access: 'member',
      summary: "An agent's test runs, newest first",
      description: `At most ${RUNS_LISTED_MAX}; progress and pass rates without the attempts (GET /api/test-runs/{run_id} has them).`,
      params: uuidParam('agent_id'),
      responses: { 200: { description: 'Runs', schema: z.array(RunSchema) }, 404: { description: 'No such agent' } },
      async handler({ params }) {
        return { status: 200, body: await listRuns(db, params.agent_id as string, RUNS_LISTED_MAX) };
      },
    }),
    route({
      method: 'get',
      path: '/api/test-runs/{run_id}',
      operationId: 'getTestRun',
      tag: TAG,
      access: 'member',
      summary: 'A test run: progress, pass rates and every attempt',
      description:
        "While it runs: `progress` and the attempts finished so far. Per test and version: `pass_rate` over the finished repeats and `passed` (pass_rate >= the test's pass_threshold) once all finished. Each attempt has its expectations' results, the judge's verdicts and reasons, the transcript, the tool calls, tools left unmocked, token usage and, for replays, the turn-by-turn `diff` with the recorded call.",
      params: uuidParam('run_id'),
      responses: { 200: { description: 'The run', schema: RunSchema }, 404: { description: 'No such run' } },
      async handler({ params }) {
        return { status: 200, body: await getRun(db, params.run_id as string) };
      },
    }),
    route({
      method: 'post',
      path: '/api/test-runs/{run_id}/cancel',
      operationId: 'cancelTestRun',
      tag: TAG,
      access: 'member',
      summary: 'Cancel a running test run',
      description: 'Conversations in progress are hung up; finished attempts keep their results.',
      params: uuidParam('run_id'),
      responses: { 200: { description: 'The canceled run', schema: RunSchema }, 404: { description: 'No such run' }, 409: { description: 'The run is not running' } },
      async handler({ params }) {
        return { status: 200, body: await cancelRun(deps, params.run_id as string) };
      },
    }),
  ];
}
