/**
 * MCP tools as the LLM and the call see them (docs/tools.md, MCP servers). Workflow-safe: pure.
 *
 * What the LLM gets differs from what the server listed, because every LLM provider here (OpenAI,
 * Azure OpenAI, Groq) takes OpenAI function definitions:
 * - the function name is `<server>__<tool>`: names must match ^[a-zA-Z0-9_-]{1,64}$, so other
 *   characters become `_` and the name is cut at 64;
 * - the parameters must be an object schema at the top level: `type` is forced to `object`,
 *   `properties` defaults to {}, `required` keeps only listed properties, and the top-level
 *   combinators OpenAI refuses there (`anyOf`, `oneOf`, `allOf`, `not`, `enum`) are dropped (the
 *   server still validates the arguments);
 * - `$schema`, `$id` and `$comment` are removed at every depth (no meaning to the LLM, and some
 *   validators refuse `$schema` inside a function);
 * - `additionalProperties: {}` (what zod's loose objects list) becomes `true`;
 * - the description is cut at 1,024 characters.
 */

export const MAX_FUNCTION_NAME = 64;
const MAX_DESCRIPTION = 1024;
const TOP_LEVEL_REFUSED = ['anyOf', 'oneOf', 'allOf', 'not', 'enum'];
const META_KEYS = new Set(['$schema', '$id', '$comment']);

export function mcpToolAllowed(server: { allowed_tools: string[] | null }, tool: string): boolean {
  return server.allowed_tools === null || server.allowed_tools === undefined || server.allowed_tools.includes(tool);
}

export function mcpFunctionName(server: string, tool: string): string {
  return `${server}__${tool}`.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, MAX_FUNCTION_NAME);
}

/** Splits `server/tool` (the tool's own name may contain `/`); null when it is not a reference. */
export function parseMcpRef(ref: string): { server: string; tool: string } | null {
  const slash = ref.indexOf('/');
  if (slash <= 0 || slash === ref.length - 1) return null;
  return { server: ref.slice(0, slash), tool: ref.slice(slash + 1) };
}

function stripMeta(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripMeta);
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (META_KEYS.has(key)) continue;
    out[key] = key === 'additionalProperties' && v && typeof v === 'object' && Object.keys(v).length === 0 ? true : stripMeta(v);
  }
  return out;
}

export function normaliseMcpSchema(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  const out = stripMeta(schema ?? {}) as Record<string, unknown>;
  for (const key of TOP_LEVEL_REFUSED) delete out[key];
  out.type = 'object';
  const properties = out.properties && typeof out.properties === 'object' && !Array.isArray(out.properties) ? (out.properties as Record<string, unknown>) : {};
  out.properties = properties;
  out.required = Array.isArray(out.required) ? out.required.filter((n) => typeof n === 'string' && n in properties) : [];
  return out;
}

export const normaliseMcpDescription = (text: string) => (text.length > MAX_DESCRIPTION ? text.slice(0, MAX_DESCRIPTION) : text);

/**
 * The arguments an MCP tool is sent: the call's context merged in as for webhook tools
 * (toolArguments), except that a tool whose schema says `additionalProperties: false` gets only
 * the properties it declares. Such a server refuses unknown arguments, so sending the context
 * would fail every call; a declared property (`phone_number`, a custom parameter) is still filled.
 */
export function mcpArguments(merged: Record<string, unknown>, inputSchema: Record<string, unknown>): Record<string, unknown> {
  if (inputSchema.additionalProperties !== false) return merged;
  const declared = (inputSchema.properties ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(merged).filter(([key]) => key in declared));
}
