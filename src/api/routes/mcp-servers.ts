/**
 * MCP servers as a tool source (docs/tools.md, MCP servers): CRUD, refresh (list the server's
 * tools and store them, so calls never list tools on their turn path) and a test of one tool
 * through exactly the code a call uses. Ownership as for webhook tools.
 */
import { z } from 'zod';
import { UniqueConstraintError } from 'sequelize';
import type { ApiContext } from '../context';
import { conflict, HttpError, notFound, unprocessable } from '../errors';
import { route, uuidParam } from '../route';
import { plain, plainAll } from '../../db/database';
import type { McpServerRow } from '../../db/models';
import { outboundGuard } from '../../security/outbound-guard';
import { connectMcp, describeMcpError, listMcpTools } from '../../tools/mcp-client';
import { McpSessionPool } from '../../tools/mcp-sessions';
import { removeMcpReferences } from '../../tools/mcp-references';
import { keepMaskedHeaders, sealHeaders } from '../serializers/tool';
import { mcpEndpoint, mcpHeaders, mcpServerJson } from '../serializers/mcp-server';
import { ownedMcpServer } from '../ownership';
import { recordAgentVersion } from '../../agent-tests/versions';
import { McpServerCreateSchema, McpServerPatchSchema, McpServerSchema, McpToolTestBodySchema, McpToolTestResultSchema } from '../schemas/mcp-server';

const ServerIdParam = uuidParam('server_id');

export function mcpServerRoutes(ctx: ApiContext) {
  const { db, box } = ctx;
  const { McpServer } = db.models;
  const outbound = outboundGuard(ctx.config);
  const owned = ownedMcpServer(db);
  const findServer = async (id: string): Promise<McpServerRow> => {
    const row = plain(await McpServer.findByPk(id));
    if (!row) throw notFound('MCP server');
    return row;
  };
  const duplicateName = (name: string) => conflict(`An MCP server named ${name} already exists`);
  const answer = (row: McpServerRow) => mcpServerJson(box, row);

  return [
    route({
      method: 'get',
      path: '/api/mcp-servers',
      operationId: 'listMcpServers',
      tag: 'MCP servers',
      access: 'member',
      summary: 'List MCP servers',
      description: 'All MCP servers, by name, with the tools of their last refresh. Header values are masked (last four characters) for everyone.',
      responses: { 200: { description: 'All MCP servers', schema: z.array(McpServerSchema) } },
      async handler() {
        return { status: 200, body: plainAll(await McpServer.findAll({ order: [['name', 'ASC']] })).map(answer) };
      },
    }),
    route({
      method: 'get',
      path: '/api/mcp-servers/{server_id}',
      operationId: 'getMcpServer',
      tag: 'MCP servers',
      access: 'member',
      summary: 'Get one MCP server',
      params: ServerIdParam,
      responses: { 200: { description: 'The MCP server', schema: McpServerSchema }, 404: { description: 'No such MCP server' } },
      async handler({ params }) {
        return { status: 200, body: answer(await findServer(params.server_id as string)) };
      },
    }),
    route({
      method: 'post',
      path: '/api/mcp-servers',
      operationId: 'createMcpServer',
      tag: 'MCP servers',
      access: 'member',
      summary: 'Add an MCP server',
      description:
        'Headers are stored encrypted and answered masked. Its tools are listed by `POST /api/mcp-servers/{server_id}/refresh`, not here. The caller becomes the owner: members may change, delete, refresh and test only their own (any server\'s tools may be used in an agent).',
      body: McpServerCreateSchema,
      responses: { 201: { description: 'Created', schema: McpServerSchema }, 409: { description: 'An MCP server with this name exists' } },
      async handler({ body, auth }) {
        if (await McpServer.findOne({ where: { name: body.name } })) throw duplicateName(body.name);
        try {
          const row = await McpServer.create({
            name: body.name,
            url: body.url,
            headers_encrypted: sealHeaders(box, body.headers),
            allowed_tools: body.allowed_tools,
            timeout_secs: body.timeout_secs,
            owner_id: auth.userId,
          });
          return { status: 201, body: answer(plain(row)) };
        } catch (err) {
          if (err instanceof UniqueConstraintError) throw duplicateName(body.name);
          throw err;
        }
      },
    }),
    route({
      method: 'patch',
      path: '/api/mcp-servers/{server_id}',
      operationId: 'updateMcpServer',
      tag: 'MCP servers',
      access: 'member',
      summary: 'Update an MCP server (partial)',
      description:
        'Any field except `name` (agents refer to it). `headers` replaces all headers; a value sent back masked as it was answered keeps the stored value. A new `url` clears the stored tools: refresh again.',
      params: ServerIdParam,
      owned,
      body: McpServerPatchSchema,
      responses: {
        200: { description: 'The updated MCP server', schema: McpServerSchema },
        404: { description: 'No such MCP server' },
        422: { description: 'Invalid field, or an attempt to rename it' },
      },
      async handler({ params, body }) {
        const current = await findServer(params.server_id as string);
        if (body.name !== undefined && body.name !== current.name) throw unprocessable('name', 'cannot be changed after creation');
        const changes: Partial<McpServerRow> = {};
        if (body.url !== undefined && body.url !== current.url) Object.assign(changes, { url: body.url, tools: [], transport: null, refreshed_at: null });
        if (body.allowed_tools !== undefined) changes.allowed_tools = body.allowed_tools;
        if (body.timeout_secs !== undefined) changes.timeout_secs = body.timeout_secs;
        if (body.headers !== undefined) changes.headers_encrypted = sealHeaders(box, keepMaskedHeaders(body.headers, mcpHeaders(box, current)));
        if (Object.keys(changes).length > 0) await McpServer.update(changes, { where: { id: current.id } });
        return { status: 200, body: answer(await findServer(current.id)) };
      },
    }),
    route({
      method: 'delete',
      path: '/api/mcp-servers/{server_id}',
      operationId: 'deleteMcpServer',
      tag: 'MCP servers',
      access: 'member',
      summary: 'Delete an MCP server and every reference to its tools',
      description: "In one transaction: removes its `<server>/…` entries from every agent's and flow node's `mcp_tools` and increments the `version` of each changed agent.",
      params: ServerIdParam,
      owned,
      responses: { 204: { description: 'Deleted' }, 404: { description: 'No such MCP server' } },
      async handler({ params }) {
        await db.sequelize.transaction(async (transaction) => {
          const server = await McpServer.findByPk(params.server_id as string, { transaction, lock: transaction.LOCK.UPDATE });
          if (!server) throw notFound('MCP server');
          const changed = await removeMcpReferences(db, server.get('name') as string, transaction);
          await server.destroy({ transaction });
          for (const agentId of changed) await recordAgentVersion(db, agentId, transaction);
        });
        return { status: 204 };
      },
    }),
    route({
      method: 'post',
      path: '/api/mcp-servers/{server_id}/refresh',
      operationId: 'refreshMcpServer',
      tag: 'MCP servers',
      access: 'member',
      summary: "List the server's tools and store them",
      description:
        'Connects (Streamable HTTP, else HTTP+SSE) through the outbound request guard, lists every tool (name, description, input schema) and stores the list: calls use it as stored. 422 when the guard refuses the address, 502 when the server cannot be reached or fails.',
      params: ServerIdParam,
      owned,
      responses: {
        200: { description: 'The server with its tools', schema: McpServerSchema },
        404: { description: 'No such MCP server' },
        422: { description: 'The outbound guard refused the URL' },
        502: { description: 'The server could not be reached or failed to list its tools' },
      },
      async handler({ params }) {
        const server = await findServer(params.server_id as string);
        let connection;
        try {
          connection = await connectMcp(outbound, mcpEndpoint(box, server));
          const tools = await listMcpTools(connection, server.timeout_secs);
          await McpServer.update({ tools, transport: connection.transport, refreshed_at: new Date() }, { where: { id: server.id } });
        } catch (err) {
          const why = describeMcpError(err, server.timeout_secs);
          if (why.startsWith('blocked:')) throw unprocessable('url', why);
          throw new HttpError(502, `Could not list the tools of ${server.url}: ${why}`);
        } finally {
          await connection?.close();
        }
        return { status: 200, body: answer(await findServer(server.id)) };
      },
    }),
    route({
      method: 'post',
      path: '/api/mcp-servers/{server_id}/test',
      operationId: 'testMcpTool',
      tag: 'MCP servers',
      access: 'member',
      summary: 'Call one of its tools with given arguments',
      description:
        "Calls the tool as a call would (same client, headers, timeout, guard, result handling). Always 200 for a known server: the tool's own errors (`isError`), timeouts, refused addresses and HTTP failures are reported in `error`. The tool need not be refreshed or allowed: this is how one tries it.",
      params: ServerIdParam,
      owned,
      body: McpToolTestBodySchema,
      responses: { 200: { description: 'What the tool answered', schema: McpToolTestResultSchema }, 404: { description: 'No such MCP server' } },
      async handler({ params, body }) {
        const server = await findServer(params.server_id as string);
        // A pool of its own, closed after the test: no session stays open in the API.
        const pool = new McpSessionPool(outbound);
        try {
          const { response, duration_ms, error } = await pool.callTool(mcpEndpoint(box, server), body.tool, body.args);
          return { status: 200, body: { response, duration_ms, error } };
        } finally {
          await pool.closeAll();
        }
      },
    }),
  ];
}
