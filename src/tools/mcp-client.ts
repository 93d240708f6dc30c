/**
 * Connects to a client's MCP server with the official SDK, through the outbound request guard.
 * Streamable HTTP first; a server that answers that with 4xx (it predates it) is tried with the
 * older HTTP+SSE transport at the same URL, the fallback the SDK documents. Used by the refresh and
 * test routes and by the call's tool activity (through the session pool, mcp-sessions.ts).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { OutboundGuard } from '../security/outbound-guard';
import { guardedFetch } from '../security/guarded-fetch';

export interface McpEndpoint {
  url: string;
  headers: Record<string, string>;
  timeout_secs: number;
}

export interface McpToolInfo {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export type McpTransportKind = 'streamable_http' | 'sse';

export interface McpConnection {
  client: Client;
  transport: McpTransportKind;
  close(): Promise<void>;
}

const CLIENT_INFO = { name: 'voice-agent-platform', version: '1.0.0' };

/** A 4xx to the first POST means "not a Streamable HTTP endpoint"; anything else is a real failure. */
function speaksOldTransport(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' && code >= 400 && code < 500 && code !== 401 && code !== 403;
}

export async function connectMcp(guard: OutboundGuard, endpoint: McpEndpoint): Promise<McpConnection> {
  const url = new URL(endpoint.url);
  const fetch = guardedFetch(guard);
  const requestInit = { headers: endpoint.headers };
  const timeout = endpoint.timeout_secs * 1000;
  const streamable = new Client(CLIENT_INFO);
  const transport = new StreamableHTTPClientTransport(url, { fetch, requestInit, reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 } });
  try {
    await streamable.connect(transport, { timeout });
    return {
      client: streamable,
      transport: 'streamable_http',
      // DELETE ends the session on the server; then the client's own state.
      close: async () => {
        await transport.terminateSession().catch(() => undefined);
        await streamable.close().catch(() => undefined);
      },
    };
  } catch (err) {
    await streamable.close().catch(() => undefined);
    if (!speaksOldTransport(err)) throw err;
  }
  const sse = new Client(CLIENT_INFO);
  // The SSE stream's own GET goes through `fetch` too, with the same headers, so the guard sees it.
  await sse.connect(new SSEClientTransport(url, { fetch, requestInit }), { timeout });
  return { client: sse, transport: 'sse', close: () => sse.close().catch(() => undefined) };
}

/** Every tool the server offers (all pages). */
export async function listMcpTools(connection: McpConnection, timeoutSecs: number): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  let cursor: string | undefined;
  // A server that keeps answering a cursor would loop forever; 50 pages is far beyond any real list.
  for (let page = 0; page < 50; page++) {
    const res = await connection.client.listTools(cursor ? { cursor } : {}, { timeout: timeoutSecs * 1000 });
    for (const t of res.tools) tools.push({ name: t.name, description: t.description ?? '', input_schema: t.inputSchema as Record<string, unknown> });
    cursor = res.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

/** Why an MCP request failed, in words for a person or the LLM. */
export function describeMcpError(err: unknown, timeoutSecs: number): string {
  const e = err as { code?: unknown; message?: string; cause?: { code?: string } };
  const message = e?.message ?? String(err);
  if (/blocked:/.test(message)) return message.slice(message.indexOf('blocked:'));
  if (e?.code === -32001 || /timed out/i.test(message)) return `timeout after ${timeoutSecs}s`;
  const sys = (e?.cause?.code ?? (typeof e?.code === 'string' ? e.code : undefined)) as string | undefined;
  if (sys === 'ECONNREFUSED' || /ECONNREFUSED/.test(message)) return 'connection refused';
  if (sys === 'ENOTFOUND' || /ENOTFOUND|DNS lookup failed/.test(message)) return 'DNS lookup failed';
  if (typeof e?.code === 'number' && (e.code as number) >= 400 && (e.code as number) < 600) return `HTTP ${e.code}`;
  return message;
}
