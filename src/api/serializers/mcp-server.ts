/** The API form of an MCP server, and the decrypted endpoint the MCP client needs. */
import type { McpServerRow } from '../../db/models';
import type { SecretBox } from '../../security/crypto';
import { apiTimestamp } from '../../shared/time';
import { mcpToolAllowed } from '../../shared/mcp-tools';
import type { McpEndpoint } from '../../tools/mcp-client';
import { maskHeaders, toolHeaders } from './tool';

export const mcpHeaders = (box: SecretBox, row: Pick<McpServerRow, 'headers_encrypted'>) => toolHeaders(box, row);

export function mcpEndpoint(box: SecretBox, row: McpServerRow): McpEndpoint {
  return { url: row.url, headers: mcpHeaders(box, row), timeout_secs: row.timeout_secs };
}

export function mcpServerJson(box: SecretBox, row: McpServerRow) {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    headers: maskHeaders(mcpHeaders(box, row)),
    allowed_tools: row.allowed_tools ?? null,
    timeout_secs: row.timeout_secs,
    tools: (row.tools ?? []).map((t) => ({ ...t, allowed: mcpToolAllowed(row, t.name), ref: `${row.name}/${t.name}` })),
    transport: (row.transport as 'streamable_http' | 'sse' | null) ?? null,
    refreshed_at: apiTimestamp(row.refreshed_at),
    created_at: apiTimestamp(row.created_at)!,
    updated_at: apiTimestamp(row.updated_at)!,
    owner_id: row.owner_id ?? null,
  };
}
