/**
 * `POST /mcp`: the platform as an MCP server (docs/mcp-server.md), Streamable HTTP in stateless
 * mode: every request gets a fresh server bound to the caller, so any API replica can answer and
 * no session outlives its request. The caller is authenticated exactly as for /api (a `vap_` API
 * key or a JWT; the role read from the database), and each tool runs its REST route through
 * invokeRoute (platform-tools.ts).
 */
import type { Request, Response, Router } from 'express';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { ApiContext } from '../context';
import { authenticate } from '../auth/authenticate';
import { HttpError, unauthorized } from '../errors';
import { invokeRoute, type AnyRoute, type AuthContext } from '../route';
import { PLATFORM_TOOLS } from './platform-tools';
import { raiseHeldInputError } from '../http/conformance';
import { mcpRequestRefusal, sendMcpRefusal } from './request-check';

function platformServer(ctx: ApiContext, routes: AnyRoute[], auth: AuthContext): McpServer {
  const server = new McpServer({ name: 'voice-agent-platform', version: '1.0.0' });
  const byOperation = new Map(routes.map((r) => [r.operationId, r]));
  for (const tool of PLATFORM_TOOLS) {
    const def = byOperation.get(tool.operationId);
    if (!def) throw new Error(`MCP tool ${tool.name}: no route ${tool.operationId}`);
    server.registerTool(tool.name, { description: tool.description, inputSchema: tool.input }, async (args: Record<string, unknown>) => {
      try {
        const reply = await invokeRoute(def, auth, tool.request(args));
        return { content: [{ type: 'text' as const, text: reply.body === undefined ? `HTTP ${reply.status}` : JSON.stringify(reply.body) }] };
      } catch (err) {
        if (err instanceof HttpError) return { isError: true, content: [{ type: 'text' as const, text: `HTTP ${err.status}: ${err.detail}` }] };
        ctx.log.error('MCP tool failed', { tool: tool.name, error: err });
        return { isError: true, content: [{ type: 'text' as const, text: 'internal error' }] };
      }
    });
  }
  return server;
}

export function mcpRouter(ctx: ApiContext, routes: AnyRoute[]): Router {
  const router = express.Router();
  router.post('/mcp', authenticate(ctx.db, ctx.jwtSecret), async (req: Request, res: Response, next) => {
    const auth = (req as Request & { authContext?: AuthContext }).authContext;
    // A publishable key passes authenticate (for web calls) but names no user.
    if (!auth) return next(unauthorized('A publishable key can only start web calls (POST /api/calls/web)'));
    try {
      // A malformed JSON body was held until the caller was known (http/conformance.ts).
      raiseHeldInputError(req);
      const refusal = mcpRequestRefusal(req);
      if (refusal) return sendMcpRefusal(res, refusal);
      const server = platformServer(ctx, routes, auth);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (err) {
      next(err);
    }
  });
  // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
  router.all('/mcp', (_req, _res, next) => next(new HttpError(405, 'POST only: this MCP server is stateless (Streamable HTTP without sessions)')));
  return router;
}
