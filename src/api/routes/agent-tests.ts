/**
 * Agent tests (docs/agent-tests.md): test cases per agent, replay tests made from real calls, the
 * stored agent versions a run can use. Changing an agent's tests is for its owner (or an admin).
 */
import { z } from 'zod';
import type { ApiContext } from '../context';
import { route, uuidParam } from '../route';
import { ownedAgent } from '../ownership';
import { findAgent } from '../agents/agent-rows';
import { listAgentVersions } from '../../agent-tests/versions';
import { createTest, deleteTest, getTest, listTests, testFromCall, updateTest } from '../agent-tests/test-service';
import { FromCallSchema, TestCreateSchema, TestPatchSchema, TestSchema } from '../schemas/agent-test';
import { Timestamp } from '../schemas/common';

const TAG = 'Agent tests';
const agentIdParam = uuidParam('agent_id');
const testParams = z.object({ agent_id: z.uuid({ error: 'must be a UUID' }), test_id: z.uuid({ error: 'must be a UUID' }) });
const fromCallParams = z.object({ agent_id: z.uuid({ error: 'must be a UUID' }), call_id: z.uuid({ error: 'must be a UUID' }) });

export function agentTestRoutes(ctx: ApiContext) {
  const { db } = ctx;
  const owned = ownedAgent(db);
  return [
    route({
      method: 'get',
      path: '/api/agents/{agent_id}/tests',
      operationId: 'listAgentTests',
      tag: TAG,
      access: 'member',
      summary: "List an agent's tests",
      params: agentIdParam,
      responses: { 200: { description: 'Tests by name', schema: z.array(TestSchema) }, 404: { description: 'No such agent' } },
      async handler({ params }) {
        return { status: 200, body: await listTests(db, params.agent_id as string) };
      },
    }),
    route({
      method: 'post',
      path: '/api/agents/{agent_id}/tests',
      operationId: 'createAgentTest',
      tag: TAG,
      access: 'member',
      summary: 'Create a simulated or scripted test',
      description:
        '`simulated`: an LLM plays the caller described by `persona` for at most `max_turns` turns (default 10). `scripted`: the caller says the lines of `script` in order. Both check their `expectations` on every attempt and have their `judge` criteria decided by an LLM judge. Tools answer from `tool_mocks` (results by tool name, in call order); a tool without results gets an error result and the run reports it. Replay tests are made with POST /api/agents/{agent_id}/tests/from-call/{call_id}.',
      params: agentIdParam,
      owned,
      body: TestCreateSchema,
      responses: {
        201: { description: 'The test', schema: TestSchema },
        404: { description: 'No such agent' },
        409: { description: 'The agent has a test with this name' },
        422: { description: 'Invalid field; `detail` names it' },
      },
      async handler({ params, body }) {
        const agentId = params.agent_id as string;
        await findAgent(db, agentId);
        return { status: 201, body: await createTest(db, agentId, body) };
      },
    }),
    route({
      method: 'post',
      path: '/api/agents/{agent_id}/tests/from-call/{call_id}',
      operationId: 'createAgentTestFromCall',
      tag: TAG,
      access: 'member',
      summary: 'Create a replay test from a finished call of this agent',
      description:
        "The caller's turns of the call are replayed in order against the agent; the test keeps what the agent said and did on each turn and the results its webhook tools gave, which answer the same tools during the replay. Expectations default to `same_tools`, `same_nodes` and `same_end`; judge criteria are optional. Every attempt reports a turn-by-turn diff of old and new replies and tool calls.",
      params: fromCallParams,
      owned,
      body: FromCallSchema,
      responses: {
        201: { description: 'The replay test', schema: TestSchema },
        404: { description: 'No such agent or call' },
        409: { description: 'The call has not finished, or the name is taken' },
        422: { description: 'The call belongs to another agent or has no caller turns' },
      },
      async handler({ params, body }) {
        return { status: 201, body: await testFromCall(db, params.agent_id as string, params.call_id as string, body) };
      },
    }),
    route({
      method: 'get',
      path: '/api/agents/{agent_id}/tests/{test_id}',
      operationId: 'getAgentTest',
      tag: TAG,
      access: 'member',
      summary: 'Get one test',
      params: testParams,
      responses: { 200: { description: 'The test', schema: TestSchema }, 404: { description: 'No such agent or test' } },
      async handler({ params }) {
        return { status: 200, body: await getTest(db, params.agent_id as string, params.test_id as string) };
      },
    }),
    route({
      method: 'patch',
      path: '/api/agents/{agent_id}/tests/{test_id}',
      operationId: 'updateAgentTest',
      tag: TAG,
      access: 'member',
      summary: 'Update a test (partial)',
      description: 'Send only the fields to change; arrays and `tool_mocks` are replaced. A replay test keeps its recorded call (no `script` or `persona`).',
      params: testParams,
      owned,
      body: TestPatchSchema,
      responses: {
        200: { description: 'The updated test', schema: TestSchema },
        404: { description: 'No such agent or test' },
        409: { description: 'The agent has a test with this name' },
        422: { description: 'Invalid field, or a result that is not a valid test of its kind' },
      },
      async handler({ params, body }) {
        return { status: 200, body: await updateTest(db, params.agent_id as string, params.test_id as string, body) };
      },
    }),
    route({
      method: 'delete',
      path: '/api/agents/{agent_id}/tests/{test_id}',
      operationId: 'deleteAgentTest',
      tag: TAG,
      access: 'member',
      summary: 'Delete a test',
      description: 'Runs that included it keep their results.',
      params: testParams,
      owned,
      responses: { 204: { description: 'Deleted' }, 404: { description: 'No such agent or test' } },
      async handler({ params }) {
        await deleteTest(db, params.agent_id as string, params.test_id as string);
        return { status: 204 };
      },
    }),
    route({
      method: 'get',
      path: '/api/agents/{agent_id}/versions',
      operationId: 'listAgentVersions',
      tag: TAG,
      access: 'member',
      summary: 'The stored versions of an agent',
      description:
        'Every change of an agent, its flow nodes or its tool references makes a new version, stored as the snapshot its calls run on; a test run can use any stored version (`agent_version`, `compare_version`). Versions older than this feature are not stored. Newest first.',
      params: agentIdParam,
      responses: {
        200: { description: 'Versions', schema: z.array(z.object({ version: z.number().int(), created_at: Timestamp }).meta({ id: 'AgentVersion' })) },
        404: { description: 'No such agent' },
      },
      async handler({ params }) {
        const agentId = params.agent_id as string;
        await findAgent(db, agentId);
        return { status: 200, body: await listAgentVersions(db, agentId) };
      },
    }),
  ];
}
