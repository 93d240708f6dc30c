/**
 * The MCP servers of an agent bundle: exported with the agent (header values masked unless an
 * administrator asked for secrets, and the tool list of their last refresh, so the references can
 * be checked on import without reaching the server), imported by name like tools: an existing
 * server is reused as it is, a missing one is created without the header values the bundle masked.
 */
import { Op, type Transaction } from 'sequelize';
import { plain, plainAll, type Database } from '../../db/database';
import type { McpServerRow } from '../../db/models';
import type { SecretBox } from '../../security/crypto';
import { parseMcpRef } from '../../shared/mcp-tools';
import { unprocessable } from '../errors';
import type { BundleMcpServer } from '../schemas/bundle';
import { maskHeaders, sealHeaders } from '../serializers/tool';
import { mcpHeaders } from '../serializers/mcp-server';

const isMasked = (value: string) => /^\*{4}[^]{0,4}$/.test(value);

export async function exportMcpServers(db: Database, box: SecretBox, refs: string[], includeSecrets: boolean) {
  const names = [...new Set(refs.flatMap((r) => parseMcpRef(r)?.server ?? []))];
  if (names.length === 0) return [];
  const rows = plainAll(await db.models.McpServer.findAll({ where: { name: { [Op.in]: names } }, order: [['name', 'ASC']] }));
  return rows.map((s) => ({
    name: s.name,
    url: s.url,
    headers: includeSecrets ? mcpHeaders(box, s) : maskHeaders(mcpHeaders(box, s)),
    allowed_tools: s.allowed_tools ?? null,
    timeout_secs: s.timeout_secs,
    tools: s.tools,
  }));
}

export async function importMcpServers(db: Database, box: SecretBox, servers: BundleMcpServer[], ownerId: string, transaction: Transaction) {
  const result = { mcp_servers_created: [] as string[], mcp_servers_reused: [] as string[], mcp_servers_without_secrets: [] as string[] };
  for (const [i, server] of servers.entries()) {
    if ([...result.mcp_servers_created, ...result.mcp_servers_reused].includes(server.name)) {
      throw unprocessable(`mcp_servers.${i}.name`, `duplicate MCP server name "${server.name}"`);
    }
    if (plain(await db.models.McpServer.findOne({ where: { name: server.name }, transaction }))) {
      result.mcp_servers_reused.push(server.name);
      continue;
    }
    const known = Object.fromEntries(Object.entries(server.headers).filter(([, value]) => !isMasked(value)));
    if (Object.keys(known).length < Object.keys(server.headers).length) result.mcp_servers_without_secrets.push(server.name);
    await db.models.McpServer.create(
      {
        name: server.name,
        url: server.url,
        headers_encrypted: sealHeaders(box, known),
        allowed_tools: server.allowed_tools,
        timeout_secs: server.timeout_secs,
        tools: server.tools as McpServerRow['tools'],
        owner_id: ownerId,
      },
      { transaction },
    );
    result.mcp_servers_created.push(server.name);
  }
  return result;
}
