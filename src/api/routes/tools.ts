import { z } from 'zod';
import { UniqueConstraintError } from 'sequelize';
import type { ApiContext } from '../context';
import { conflict, notFound, unprocessable } from '../errors';
import { route, uuidParam } from '../route';
import { plain, plainAll } from '../../db/database';
import type { ToolRow } from '../../db/models';
import { callToolWebhook } from '../../tools/webhook-client';
import { outboundGuard } from '../../security/outbound-guard';
import { removeToolReferences } from '../../tools/tool-references';
import { keepMaskedHeaders, sealHeaders, toolEndpoint, toolHeaders, toolJson } from '../serializers/tool';
import { ownedTool } from '../ownership';
import { recordAgentVersion } from '../../agent-tests/versions';
import { ToolCreateSchema, ToolPatchSchema, ToolSchema, ToolTestBodySchema, ToolTestResultSchema } from '../schemas/tool';

const ToolIdParam = uuidParam('tool_id');

export function toolRoutes(ctx: ApiContext) {
  const { db, box } = ctx;
  const { Tool } = db.models;
  const outbound = outboundGuard(ctx.config);
  const owned = ownedTool(db);

  const findTool = async (id: string): Promise<ToolRow> => {
    const row = plain(await Tool.findByPk(id));
    if (!row) throw notFound('Tool');
    return row;
  };
  const duplicateName = (name: string) => conflict(`A tool named ${name} already exists`);

  return [
    route({
      method: 'get',
      path: '/api/tools',
      operationId: 'listTools',
      tag: 'Tools',
      access: 'member',
      summary: 'List webhook tools',
      description: 'All tools, ordered by name. Header values are masked (last four characters) for everyone.',
      responses: { 200: { description: 'All tools', schema: z.array(ToolSchema) } },
      async handler() {
        const rows = plainAll(await Tool.findAll({ order: [['name', 'ASC']] }));
        return { status: 200, body: rows.map((r) => toolJson(box, r)) };
      },
    }),
    route({
      method: 'get',
      path: '/api/tools/{tool_id}',
      operationId: 'getTool',
      tag: 'Tools',
      access: 'member',
      summary: 'Get one tool',
      params: ToolIdParam,
      responses: { 200: { description: 'The tool', schema: ToolSchema }, 404: { description: 'No such tool' } },
      async handler({ params }) {
        return { status: 200, body: toolJson(box, await findTool(params.tool_id as string)) };
      },
    }),
    route({
      method: 'post',
      path: '/api/tools',
      operationId: 'createTool',
      tag: 'Tools',
      access: 'member',
      summary: 'Create a webhook tool',
      description:
        'The LLM may call the tool during calls of agents that list it. POST tools receive the arguments as a JSON body, GET tools as a query string (object and array values JSON-encoded). Headers are stored encrypted and answered masked. The caller becomes the owner: members may change, delete and test only their own tools (any tool may be used in an agent).',
      body: ToolCreateSchema,
      responses: { 201: { description: 'Created', schema: ToolSchema }, 409: { description: 'A tool with this name exists' } },
      async handler({ body, auth }) {
        if (await Tool.findOne({ where: { name: body.name } })) throw duplicateName(body.name);
        try {
          const row = await Tool.create({
            name: body.name,
            description: body.description,
            parameters: body.parameters as ToolRow['parameters'],
            webhook_url: body.webhook_url,
            webhook_method: body.webhook_method,
            headers_encrypted: sealHeaders(box, body.headers),
            timeout_secs: body.timeout_secs,
            owner_id: auth.userId,
          });
          return { status: 201, body: toolJson(box, plain(row)) };
        } catch (err) {
          if (err instanceof UniqueConstraintError) throw duplicateName(body.name);
          throw err;
        }
      },
    }),
    route({
      method: 'patch',
      path: '/api/tools/{tool_id}',
      operationId: 'updateTool',
      tag: 'Tools',
      access: 'member',
      summary: 'Update a tool (partial)',
      description:
        'Any field except `name`, which is fixed at creation (sending the current name is accepted). `headers` replaces all headers; a value sent back masked as it was answered (`****1234`) keeps the stored value.',
      params: ToolIdParam,
      owned,
      body: ToolPatchSchema,
      responses: {
        200: { description: 'The updated tool', schema: ToolSchema },
        404: { description: 'No such tool' },
        422: { description: 'Invalid field, or an attempt to rename the tool' },
      },
      async handler({ params, body }) {
        const current = await findTool(params.tool_id as string);
        if (body.name !== undefined && body.name !== current.name) throw unprocessable('name', 'cannot be changed after creation');
        const changes: Partial<ToolRow> = {};
        if (body.description !== undefined) changes.description = body.description;
        if (body.parameters !== undefined) changes.parameters = body.parameters as ToolRow['parameters'];
        if (body.webhook_url !== undefined) changes.webhook_url = body.webhook_url;
        if (body.webhook_method !== undefined) changes.webhook_method = body.webhook_method;
        if (body.timeout_secs !== undefined) changes.timeout_secs = body.timeout_secs;
        if (body.headers !== undefined) changes.headers_encrypted = sealHeaders(box, keepMaskedHeaders(body.headers, toolHeaders(box, current)));
        if (Object.keys(changes).length > 0) await Tool.update(changes, { where: { id: current.id } });
        return { status: 200, body: toolJson(box, await findTool(current.id)) };
      },
    }),
    route({
      method: 'delete',
      path: '/api/tools/{tool_id}',
      operationId: 'deleteTool',
      tag: 'Tools',
      access: 'member',
      summary: 'Delete a tool and every reference to it',
      description:
        "In one transaction: removes the tool from every agent's `tool_ids` and `pre_call_tool_ids`, from every flow node's `tool_ids`, drops flow-node `call_tool` pre-actions using it, and increments the `version` of each changed agent.",
      params: ToolIdParam,
      owned,
      responses: { 204: { description: 'Deleted' }, 404: { description: 'No such tool' } },
      async handler({ params }) {
        const toolId = params.tool_id as string;
        await db.sequelize.transaction(async (transaction) => {
          const tool = await Tool.findByPk(toolId, { transaction, lock: transaction.LOCK.UPDATE });
          if (!tool) throw notFound('Tool');
          const changed = await removeToolReferences(db, toolId, transaction);
          await tool.destroy({ transaction });
          for (const agentId of changed) await recordAgentVersion(db, agentId, transaction);
        });
        return { status: 204 };
      },
    }),
    route({
      method: 'post',
      path: '/api/tools/{tool_id}/test',
      operationId: 'testTool',
      tag: 'Tools',
      access: 'member',
      summary: "Fire the tool's webhook with given arguments",
      description:
        'Sends exactly the request a call would (method, headers, timeout, GET query string). Always 200 for a known tool: timeouts, DNS failures, refused connections, non-2xx statuses and invalid JSON are reported in `error`.',
      params: ToolIdParam,
      owned,
      body: ToolTestBodySchema,
      responses: { 200: { description: 'What the webhook answered', schema: ToolTestResultSchema }, 404: { description: 'No such tool' } },
      async handler({ params, body }) {
        const tool = await findTool(params.tool_id as string);
        const result = await callToolWebhook(outbound, toolEndpoint(box, tool), body.args);
        return { status: 200, body: result };
      },
    }),
  ];
}
