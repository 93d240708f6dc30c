/** Request and response shapes of MCP servers (docs/tools.md, MCP servers). */
import { z } from 'zod';
import { TOOL_TIMEOUT_DEFAULT_SECS, TOOL_TIMEOUT_MAX_SECS } from '../../shared/catalog';
import { Timestamp } from './common';
import { ToolHeadersSchema } from './tool';

// The `server` half of a `server/tool` reference, and the prefix of the LLM's function name.
export const MCP_SERVER_NAME_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;

const NameSchema = z
  .string()
  .regex(MCP_SERVER_NAME_PATTERN, 'must be snake_case: a lower-case letter, then up to 31 lower-case letters, digits or underscores')
  .describe('unique; agents refer to its tools as `<name>/<tool>`; cannot be changed later');
const UrlSchema = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).describe('the Streamable HTTP endpoint (or an HTTP+SSE one)');
const AllowedSchema = z
  .array(z.string().min(1).max(128))
  .max(500)
  .nullable()
  .describe('tool names agents may use; null = all the server lists');
const TimeoutSchema = z.number().int().min(1).max(TOOL_TIMEOUT_MAX_SECS).describe(`per request, 1 to ${TOOL_TIMEOUT_MAX_SECS} seconds`);
const HeadersSchema = ToolHeadersSchema.describe('sent with every request, e.g. Authorization (stored encrypted, answered masked)');

export const McpServerCreateSchema = z.object({
  name: NameSchema,
  url: UrlSchema,
  headers: HeadersSchema.default({}),
  allowed_tools: AllowedSchema.default(null),
  timeout_secs: TimeoutSchema.default(TOOL_TIMEOUT_DEFAULT_SECS),
});

export const McpServerPatchSchema = z.object({
  name: z.string().optional().describe('may be sent but must equal the current name'),
  url: UrlSchema.optional(),
  headers: HeadersSchema.nullable().optional().describe('replaces all headers; a value sent back masked keeps the stored one; null or {} removes them'),
  allowed_tools: AllowedSchema.optional(),
  timeout_secs: TimeoutSchema.optional(),
});

const McpToolSchema = z.object({
  name: z.string(),
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()).describe("the server's JSON Schema for the arguments, as listed"),
  allowed: z.boolean().describe('passes allowed_tools: agents may use it'),
  ref: z.string().describe('what agents and flow nodes put in `mcp_tools`: `<server>/<tool>`'),
}).meta({ id: 'McpTool' });

export const McpServerSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  url: z.string(),
  headers: z.record(z.string(), z.string()).describe('values masked: the last four characters'),
  allowed_tools: z.array(z.string()).nullable(),
  timeout_secs: z.number().int(),
  tools: z.array(McpToolSchema).describe('as of the last refresh (empty before the first)'),
  transport: z.enum(['streamable_http', 'sse']).nullable().describe('what the last refresh spoke'),
  refreshed_at: Timestamp.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
  owner_id: z.uuid().nullable().describe("the user who created it (members may change only their own); null = the administrators'"),
}).meta({ id: 'McpServer' });

export const McpToolTestBodySchema = z.object({
  tool: z.string().min(1).describe('a tool name of this server'),
  args: z.record(z.string(), z.unknown()).default({}).describe('arguments as the LLM would pass them'),
});

export const McpToolTestResultSchema = z.object({
  response: z.unknown().describe("the tool's text (parsed when it is JSON), as the LLM would get it"),
  duration_ms: z.number().int(),
  error: z.string().nullable().describe('null on success; the tool\'s own error (isError), a timeout, a refused address, HTTP status'),
});
