/**
 * `POST /mcp` in the OpenAPI document. It is not a REST route (its body is JSON-RPC 2.0, answered
 * by the MCP SDK's Streamable HTTP transport, endpoint.ts), so it is written here rather than
 * derived from a route definition; the tools it offers are listed from PLATFORM_TOOLS, so the
 * document cannot name a tool the server does not have. docs/mcp-server.md is the guide.
 */
import { PLATFORM_TOOLS } from './platform-tools';

const jsonRpcId = { oneOf: [{ type: 'string' }, { type: 'integer' }], description: 'Absent in a notification' };

const request = {
  type: 'object',
  description: 'A JSON-RPC 2.0 request or notification (a batch is an array of them).',
  required: ['jsonrpc', 'method'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: jsonRpcId,
    method: { type: 'string', examples: ['initialize', 'tools/list', 'tools/call'] },
    params: { type: 'object', additionalProperties: true },
  },
};

const response = {
  type: 'object',
  description: 'A JSON-RPC 2.0 response: `result`, or `error` for a protocol error. A tool that fails (a REST refusal) is a `result` with `isError: true`.',
  required: ['jsonrpc'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { oneOf: [...jsonRpcId.oneOf, { type: 'null' }] },
    result: { type: 'object', additionalProperties: true },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
    },
  },
};

const errorBody = { $ref: '#/components/schemas/Error' };

function toolTable(): string {
  return PLATFORM_TOOLS.map((tool) => `- \`${tool.name}\`: ${tool.description}`).join('\n');
}

/** The path item for `/mcp`, with the platform's tools in its description. */
export function mcpPathItem(): Record<string, unknown> {
  return {
    post: {
      operationId: 'postMcp',
      tags: ['MCP'],
      summary: 'The platform as an MCP server (Streamable HTTP, stateless)',
      description: [
        'Model Context Protocol over Streamable HTTP without sessions: send JSON-RPC 2.0 with',
        '`Accept: application/json, text/event-stream`. Every tool runs its REST route with the',
        "caller's role and ownership (docs/mcp-server.md). `GET` and `DELETE` answer 405.",
        '',
        'Tools:',
        toolTable(),
      ].join('\n'),
      'x-required-role': 'member',
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { oneOf: [request, { type: 'array', items: request }] } } },
      },
      responses: {
        200: { description: 'The JSON-RPC response(s)', content: { 'application/json': { schema: { oneOf: [response, { type: 'array', items: response }] } } } },
        202: { description: 'Notifications only: accepted, no body' },
        400: {
          description: 'Malformed JSON (`{detail}`), or not a JSON-RPC message (a JSON-RPC error from the transport)',
          content: { 'application/json': { schema: { oneOf: [errorBody, response] } } },
        },
        401: { description: 'Missing, invalid or expired credentials, or a publishable key', content: { 'application/json': { schema: errorBody } } },
        406: {
          description: 'The Accept header does not take both application/json and text/event-stream (a JSON-RPC error from the transport)',
          content: { 'application/json': { schema: response } },
        },
        413: { description: 'Body over the size limit', content: { 'application/json': { schema: errorBody } } },
        415: {
          description: 'Not application/json (a JSON-RPC error from the transport)',
          content: { 'application/json': { schema: response } },
        },
      },
    },
  };
}
