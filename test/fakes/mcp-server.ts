/**
 * A real MCP server built with the official SDK, on 127.0.0.1, for the platform's MCP client:
 * Streamable HTTP at `/mcp` (stateful sessions) and the older HTTP+SSE transport at `/sse` +
 * `/messages`. Its tools cover what a call must survive: one that answers (and echoes what it was
 * given), one that throws, one that never answers in time, one that answers `isError`, one that
 * returns an image, one whose schema forbids extra arguments, and one that can hold its requests
 * unanswered until the test lets them go (a worker killed while a tool call is in flight). With
 * `requiredHeaders` every request without them is answered 401.
 *
 *   const mcp = await startFakeMcpServer({ requiredHeaders: { authorization: 'Bearer s3cret' } });
 *   ... mcp.url (Streamable HTTP), mcp.sseUrl ...
 *   ... mcp.calls[0] → { tool: 'lookup_customer', args: {...}, session: '...' } ...
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';

export interface FakeMcpCall {
  tool: string;
  args: Record<string, unknown>;
  /** The MCP session the call came in on. */
  session: string | undefined;
  /** The request's `_meta` (the platform's idempotency key), recorded by `track_order`. */
  meta?: Record<string, unknown>;
}

export interface FakeMcpServer {
  /** Streamable HTTP endpoint. */
  url: string;
  /** HTTP+SSE endpoint (the 2024-11-05 transport). */
  sseUrl: string;
  calls: FakeMcpCall[];
  /** Sessions initialised and closed (DELETE or SSE stream gone), over the server's life. */
  sessionsOpened: number;
  sessionsClosed: number;
  /** JSON-RPC methods received, in order (`initialize`, `tools/list`, `tools/call`, ...). */
  methods: string[];
  /** Requests refused for a missing header. */
  refused: number;
  /** How long `slow_report` takes. */
  slowMs: number;
  /** How many of the next `track_order` calls are held unanswered until `releaseHeld()`. */
  holdNext: number;
  /** Lets every held `track_order` call answer. */
  releaseHeld(): void;
  /** How many requests of a JSON-RPC method arrived (e.g. `tools/list`), on Streamable HTTP. */
  count(method: string): number;
  /** Forgets every Streamable HTTP session, as a restarted server would: their next request gets 404. */
  forgetSessions(): void;
  reset(): void;
  stop(): Promise<void>;
}

function buildServer(fake: FakeMcpServer, sessionOf: () => string | undefined, held: { wait(): Promise<void> }): McpServer {
  const server = new McpServer({ name: 'fake-crm', version: '1.0.0' });
  const record = (tool: string, args: Record<string, unknown>, extra?: { _meta?: Record<string, unknown> }) =>
    fake.calls.push({ tool, args, session: sessionOf(), ...(extra ? { meta: extra._meta ?? {} } : {}) });
  server.registerTool(
    'lookup_customer',
    {
      description: 'Look up a customer by id; answers their plan and balance',
      // Loose: the platform merges the call's context (phone_number, direction, custom parameters) in.
      inputSchema: z.looseObject({ customer_id: z.string().describe('customer number') }),
    },
    async (args) => {
      record('lookup_customer', args);
      return { content: [{ type: 'text', text: JSON.stringify({ customer_id: args.customer_id, plan: 'gold', balance: 42 }) }] };
    },
  );
  // Loose too, so a test sees what a failing call was sent (the call's context included).
  server.registerTool('explode', { description: 'Always throws', inputSchema: z.looseObject({ reason: z.string().optional() }) }, async (args) => {
    record('explode', args);
    throw new Error('database connection lost');
  });
  server.registerTool('slow_report', { description: 'Takes a long time', inputSchema: {} }, async (args) => {
    record('slow_report', args);
    await new Promise((r) => setTimeout(r, fake.slowMs));
    return { content: [{ type: 'text', text: 'finally' }] };
  });
  server.registerTool('check_stock', { description: 'Reports out of stock as a tool error', inputSchema: { sku: z.string() } }, async (args) => {
    record('check_stock', args);
    return { isError: true, content: [{ type: 'text', text: `sku ${args.sku} is not in the catalogue` }] };
  });
  server.registerTool('render_chart', { description: 'Returns a chart image and a caption', inputSchema: {} }, async (args) => {
    record('render_chart', args);
    return {
      content: [
        { type: 'text', text: 'sales are up 12%' },
        { type: 'image', data: Buffer.alloc(2048).toString('base64'), mimeType: 'image/png' },
      ],
    };
  });
  server.registerTool(
    'strict_echo',
    { description: 'Echoes its word; accepts no other argument', inputSchema: z.strictObject({ word: z.string() }) },
    async (args) => {
      record('strict_echo', args);
      return { content: [{ type: 'text', text: `echo: ${args.word}` }] };
    },
  );
  server.registerTool(
    'track_order',
    { description: 'Where an order is; answers which attempt this was', inputSchema: z.looseObject({ order: z.string() }) },
    async (args, extra) => {
      record('track_order', args, extra);
      const attempt = fake.calls.filter((c) => c.tool === 'track_order').length;
      if (fake.holdNext > 0) {
        fake.holdNext--;
        await held.wait();
      }
      return { content: [{ type: 'text', text: JSON.stringify({ order: args.order, status: 'shipped', attempt }) }] };
    },
  );
  return server;
}

async function readJson(req: http.IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

export async function startFakeMcpServer(options: { requiredHeaders?: Record<string, string> } = {}): Promise<FakeMcpServer> {
  const streamable = new Map<string, StreamableHTTPServerTransport>();
  const sse = new Map<string, SSEServerTransport>();
  let releases: Array<() => void> = [];
  const held = { wait: () => new Promise<void>((resolve) => releases.push(resolve)) };
  const fake: FakeMcpServer = {
    url: '',
    sseUrl: '',
    calls: [],
    methods: [],
    sessionsOpened: 0,
    sessionsClosed: 0,
    refused: 0,
    slowMs: 5000,
    holdNext: 0,
    releaseHeld() {
      const waiting = releases;
      releases = [];
      for (const release of waiting) release();
    },
    count: (method) => fake.methods.filter((m) => m === method).length,
    forgetSessions() {
      streamable.clear();
    },
    reset() {
      fake.calls = [];
      fake.methods = [];
      fake.slowMs = 5000;
      fake.holdNext = 0;
      fake.releaseHeld();
    },
    stop: async () => {
      fake.releaseHeld();
      for (const t of [...streamable.values(), ...sse.values()]) await t.close().catch(() => undefined);
      httpServer.closeAllConnections();
      await new Promise<void>((r) => httpServer.close(() => r()));
    },
  };

  const authorised = (req: http.IncomingMessage) =>
    Object.entries(options.requiredHeaders ?? {}).every(([name, value]) => req.headers[name.toLowerCase()] === value);

  const httpServer = http.createServer(async (req, res) => {
    try {
      if (!authorised(req)) {
        fake.refused++;
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
        return;
      }
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/mcp') {
        const id = req.headers['mcp-session-id'] as string | undefined;
        let transport = id ? streamable.get(id) : undefined;
        if (id && !transport) {
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
          return;
        }
        if (!transport) {
          let sessionId: string | undefined;
          transport = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: (sid) => {
              sessionId = sid;
              streamable.set(sid, transport!);
              fake.sessionsOpened++;
            },
          });
          transport.onclose = () => {
            if (sessionId && streamable.delete(sessionId)) fake.sessionsClosed++;
          };
          await buildServer(fake, () => sessionId, held).connect(transport);
        }
        // Read here (not by the transport) to record the methods; the transport takes it parsed.
        const body = req.method === 'POST' ? await readJson(req) : undefined;
        for (const m of Array.isArray(body) ? body : body ? [body] : []) if (typeof m?.method === 'string') fake.methods.push(m.method);
        await transport.handleRequest(req, res, body);
        return;
      }
      if (url.pathname === '/sse' && req.method === 'GET') {
        const transport = new SSEServerTransport('/messages', res);
        sse.set(transport.sessionId, transport);
        fake.sessionsOpened++;
        res.on('close', () => {
          if (sse.delete(transport.sessionId)) fake.sessionsClosed++;
        });
        await buildServer(fake, () => transport.sessionId, held).connect(transport);
        return;
      }
      if (url.pathname === '/messages' && req.method === 'POST') {
        const transport = sse.get(url.searchParams.get('sessionId') ?? '');
        if (!transport) return void res.writeHead(404).end('no such session');
        await transport.handlePostMessage(req, res);
        return;
      }
      res.writeHead(404).end();
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  });
  await new Promise<void>((r) => httpServer.listen(0, '127.0.0.1', () => r()));
  const { port } = httpServer.address() as AddressInfo;
  fake.url = `http://127.0.0.1:${port}/mcp`;
  fake.sseUrl = `http://127.0.0.1:${port}/sse`;
  return fake;
}
