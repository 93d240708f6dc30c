import { z } from 'zod';
import type { ApiContext } from '../context';
import { forbidden } from '../errors';
import { route, uuidParam } from '../route';
import { exportBundle, importBundle } from '../agents/bundle-service';
import { withWarnings } from '../agents/agent-json';
import { BundleImportSchema, BundleSchema, ImportResultSchema } from '../schemas/bundle';

const TAG = 'Agents';

const ExportQuery = z.object({
  include_secrets: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v === 'true')
    .describe('administrators only: tool header values in clear text instead of masked'),
});

export function bundleRoutes(ctx: ApiContext) {
  const { db, box } = ctx;
  return [
    route({
      method: 'get',
      path: '/api/agents/{agent_id}/export',
      operationId: 'exportAgent',
      tag: TAG,
      access: 'member',
      summary: 'Export an agent as a portable bundle',
      description:
        'Bundle version "1": the agent config (no id, timestamps, version or webhook secret), every tool it refers to (agent `tool_ids`, `pre_call_tool_ids`, node `tool_ids`, `call_tool` pre-actions) with its `id` as bundle-local reference, and all flow nodes. Tool header values are masked; an administrator gets them in clear text with `?include_secrets=true` (then treat the bundle like a credential).',
      params: uuidParam('agent_id'),
      query: ExportQuery,
      responses: {
        200: { description: 'The bundle', schema: BundleSchema },
        403: { description: 'include_secrets=true asked by a member' },
        404: { description: 'No such agent' },
      },
      async handler({ params, query, auth }) {
        if (query.include_secrets && auth.role !== 'admin') throw forbidden('Only an administrator may export secrets (include_secrets=true)');
        return { status: 200, body: await exportBundle(db, box, params.agent_id as string, { includeSecrets: query.include_secrets }) };
      },
    }),
    route({
      method: 'post',
      path: '/api/agents/import',
      operationId: 'importAgent',
      tag: TAG,
      access: 'member',
      summary: 'Import an agent bundle',
      description:
        'Tools are matched by name: existing tools are reused unchanged, missing ones are created (owned by the caller; header values the bundle carries masked are left out and the tool is listed in `tools_without_secrets`). Tool references (bundle-local `id`s of `tools` entries, or UUIDs of tools of this installation) are remapped to real ids. When an agent with the name exists, the answer is 409 unless `overwrite` is true, which replaces its config and flow nodes in one transaction (same id, `version` incremented, webhook secret kept). A new agent gets a fresh webhook secret (see POST /api/agents/{agent_id}/webhook-secret). Response-only fields in the bundle (`id`, timestamps, counters, `warnings`) are ignored. `agent.warnings` says which of its providers cannot run on this installation.',
      body: BundleImportSchema,
      responses: {
        200: { description: 'Existing agent overwritten', schema: ImportResultSchema },
        201: { description: 'Agent created', schema: ImportResultSchema },
        403: { description: 'overwrite of an agent a member does not own' },
        409: { description: 'An agent with this name exists and overwrite is false' },
        422: { description: 'Unsupported version, invalid field or graph, or unknown tool reference; `detail` names the field' },
      },
      async handler({ body, auth }) {
        const result = await importBundle(db, box, body, auth);
        return { status: result.created ? 201 : 200, body: { ...result.body, agent: withWarnings(result.body.agent, ctx.config) } };
      },
    }),
  ];
}
