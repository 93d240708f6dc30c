/**
 * What the Streamable HTTP transport would refuse, refused first in the API's own error shape.
 * The SDK answers these with a bare JSON-RPC error; an API client (and the fuzz test's rule:
 * every 4xx has a `detail`) expects `{detail}`. The answer carries both, so an MCP client still
 * reads the JSON-RPC error it knows.
 */
import type { Request, Response } from 'express';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

interface Refusal {
  status: number;
  code: number;
  message: string;
}

const isMessage = (value: unknown) => JSONRPCMessageSchema.safeParse(value).success;

/** The refusal a POST /mcp request earns before it reaches the transport, or null. */
export function mcpRequestRefusal(req: Request): Refusal | null {
  // The transport's rule (MCP spec, Streamable HTTP: "MUST include an Accept header").
  const accept = req.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    return { status: 406, code: -32000, message: 'Not Acceptable: the Accept header must list both application/json and text/event-stream' };
  }
  if (!req.is('application/json')) return { status: 415, code: -32000, message: 'Unsupported Media Type: Content-Type must be application/json' };
  const body: unknown = req.body;
  const valid = Array.isArray(body) ? body.length > 0 && body.every(isMessage) : isMessage(body);
  if (!valid) return { status: 400, code: -32600, message: 'Invalid Request: the body must be a JSON-RPC 2.0 message or a non-empty batch of them' };
  return null;
}

export function sendMcpRefusal(res: Response, refusal: Refusal): void {
  res.status(refusal.status).json({ jsonrpc: '2.0', error: { code: refusal.code, message: refusal.message }, id: null, detail: refusal.message });
}
