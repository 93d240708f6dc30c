/**
 * Checks `mcp_tools` references (`<server>/<tool>`) of agents and flow nodes: the server exists,
 * its last refresh listed the tool, and its allowed_tools let agents use it. A typo becomes a 422
 * here instead of a tool the LLM never sees.
 */
import { Op, type Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { plainAll } from '../../db/database';
import { mcpToolAllowed, parseMcpRef } from '../../shared/mcp-tools';
import { unprocessable } from '../errors';

export async function assertMcpTools(db: Database, refs: string[], field: string, transaction?: Transaction): Promise<void> {
  if (refs.length === 0) return;
  const parsed = refs.map(parseMcpRef);
  const names = [...new Set(parsed.flatMap((p) => (p ? [p.server] : [])))];
  const servers = plainAll(await db.models.McpServer.findAll({ where: { name: { [Op.in]: names } }, transaction }));
  const byName = new Map(servers.map((s) => [s.name, s]));
  parsed.forEach((ref, i) => {
    const at = `${field}.${i}`;
    if (!ref) throw unprocessable(at, 'must be <server>/<tool>');
    const server = byName.get(ref.server);
    if (!server) throw unprocessable(at, `unknown MCP server ${ref.server}`);
    if (!server.tools.some((t) => t.name === ref.tool)) {
      throw unprocessable(at, `MCP server ${ref.server} has no tool ${ref.tool} (as of its last refresh: POST /api/mcp-servers/${server.id}/refresh)`);
    }
    if (!mcpToolAllowed(server, ref.tool)) throw unprocessable(at, `${ref.tool} is not in the allowed_tools of MCP server ${ref.server}`);
  });
}
