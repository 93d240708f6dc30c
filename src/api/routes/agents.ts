import { z } from 'zod';
import type { ApiContext } from '../context';
import { route, uuidParam } from '../route';
import { plainAll } from '../../db/database';
import { agentCounts, agentJson, withWarnings } from '../agents/agent-json';
import { findAgent } from '../agents/agent-rows';
import { createAgent, deleteAgent, rotateWebhookSecret, updateAgent } from '../agents/agent-service';
import { agentStats } from '../agents/stats';
import { ownedAgent } from '../ownership';
import { AgentCreateSchema, AgentPatchSchema, AgentSchema } from '../schemas/agent';

const StatsSchema = z.object({
  total_calls: z.number().int(),
  active_calls: z.number().int().describe('ringing + in_progress'),
  completed_calls: z.number().int(),
  failed_calls: z.number().int(),
  avg_duration: z.number().describe('seconds, over completed calls; 0 when none'),
  agents: z.array(
    z.object({
      agent_id: z.uuid(),
      agent_name: z.string(),
      total_calls: z.number().int(),
      completed: z.number().int(),
      failed: z.number().int(),
      avg_duration: z.number(),
    }),
  ),
}).meta({ id: 'AgentStats' });

const agentIdParam = uuidParam('agent_id');
const TAG = 'Agents';

export function agentRoutes(ctx: ApiContext) {
  const { db, box } = ctx;
  const warn = <T extends ReturnType<typeof agentJson>>(agent: T) => withWarnings(agent, ctx.config);
  const owned = ownedAgent(db);
  return [
    // Registered before /api/agents/{agent_id}, which would otherwise take "stats" for an id.
    route({
      method: 'get',
      path: '/api/agents/stats',
      operationId: 'getAgentStats',
      tag: TAG,
      access: 'member',
      summary: 'Call statistics, overall and per agent',
      description:
        'Totals count every call, including those of deleted agents. `active_calls` = ringing + in_progress. `avg_duration` is in seconds over completed calls with a duration (0 when none). `agents` lists every existing agent, by name.',
      responses: { 200: { description: 'Statistics', schema: StatsSchema } },
      async handler() {
        return { status: 200, body: await agentStats(db) };
      },
    }),
    route({
      method: 'get',
      path: '/api/agents',
      operationId: 'listAgents',
      tag: TAG,
      access: 'member',
      summary: 'List agents',
      description: 'All agents ordered by name, each with `total_calls` and `flow_nodes_count` (0 = freeform agent).',
      responses: { 200: { description: 'Agents', schema: z.array(AgentSchema) } },
      async handler() {
        const rows = plainAll(await db.models.Agent.findAll({ order: [['name', 'ASC']] }));
        const counts = await agentCounts(db, null);
        return { status: 200, body: rows.map((row) => warn(agentJson(row, counts(row.id)))) };
      },
    }),
    route({
      method: 'post',
      path: '/api/agents',
      operationId: 'createAgent',
      tag: TAG,
      access: 'member',
      summary: 'Create an agent',
      description:
        'The caller becomes the agent\'s owner: members may change and delete only the agents they own. The agent is created even when one of its providers cannot run on this installation (no adapter, or its API key is not set); `warnings` then says which and why. Minimal body `{name, prompt}`; every other field has a default (first provider of each kind, `stt_language` "en", pipeline defaults). Unknown fields are rejected. The response includes `webhook_secret`, the key that signs this agent\'s webhook notifications: it is shown only here and by POST /api/agents/{agent_id}/webhook-secret.',
      body: AgentCreateSchema,
      responses: {
        201: { description: 'The created agent, with its webhook secret', schema: AgentSchema },
        409: { description: 'An agent with this name exists' },
        422: { description: 'Invalid field or unknown tool id; `detail` names the field' },
      },
      async handler({ body, auth }) {
        return { status: 201, body: warn(await createAgent(db, box, body, auth.userId)) };
      },
    }),
    route({
      method: 'get',
      path: '/api/agents/{agent_id}',
      operationId: 'getAgent',
      tag: TAG,
      access: 'member',
      summary: 'Get an agent with its full configuration',
      description: 'Flow nodes are at GET /api/agents/{agent_id}/flow.',
      params: agentIdParam,
      responses: { 200: { description: 'The agent', schema: AgentSchema }, 404: { description: 'No such agent' } },
      async handler({ params }) {
        const row = await findAgent(db, params.agent_id as string);
        return { status: 200, body: warn(agentJson(row, (await agentCounts(db, [row.id]))(row.id))) };
      },
    }),
    route({
      method: 'patch',
      path: '/api/agents/{agent_id}',
      operationId: 'updateAgent',
      tag: TAG,
      access: 'member',
      summary: 'Update an agent (partial)',
      description:
        'Send only the fields to change. `pipeline_settings`, `llm_settings`, `stt_settings` and `tts_settings` are merged key by key; `null` for a key removes it (pipeline keys revert to their default). Changing `stt_provider` away from the one with `stt_mode` clears `stt_mode`; changing `llm_provider` while `llm_model` is the old provider\'s default switches to the new provider\'s default. A rename also renames the agent in telephony endpoint mappings. Every successful update increments `version`.',
      params: agentIdParam,
      owned,
      body: AgentPatchSchema,
      responses: {
        200: { description: 'The updated agent', schema: AgentSchema },
        404: { description: 'No such agent' },
        409: { description: 'The new name is taken' },
        422: { description: 'Invalid field, inconsistent result (e.g. idle_end_secs <= idle_warn_secs) or unknown tool id' },
      },
      async handler({ params, body }) {
        return { status: 200, body: warn(await updateAgent(db, params.agent_id as string, body)) };
      },
    }),
    route({
      method: 'delete',
      path: '/api/agents/{agent_id}',
      operationId: 'deleteAgent',
      tag: TAG,
      access: 'member',
      summary: 'Delete an agent and its flow nodes; its calls are kept',
      description: 'Calls keep their history and `agent_name`; telephony endpoints mapped to the agent are unmapped (agent name set to null).',
      params: agentIdParam,
      owned,
      responses: { 204: { description: 'Deleted' }, 404: { description: 'No such agent' } },
      async handler({ params }) {
        await deleteAgent(db, params.agent_id as string);
        return { status: 204 };
      },
    }),
    route({
      method: 'post',
      path: '/api/agents/{agent_id}/webhook-secret',
      operationId: 'rotateAgentWebhookSecret',
      tag: TAG,
      access: 'member',
      summary: "Rotate the agent's webhook signing secret",
      description: 'Generates a new `whsec_…` secret, replacing the old one at once, and returns it; it is not shown again.',
      params: agentIdParam,
      owned,
      responses: {
        200: { description: 'The new secret', schema: z.object({ webhook_secret: z.string() }) },
        404: { description: 'No such agent' },
      },
      async handler({ params }) {
        return { status: 200, body: { webhook_secret: await rotateWebhookSecret(db, box, params.agent_id as string) } };
      },
    }),
  ];
}
