/**
 * The MCP tools of an agent as a call's snapshot holds them: every `server/tool` reference of the
 * agent and its nodes whose server exists, lists the tool (as of its last refresh) and allows it,
 * with the server's address and sealed headers and the schema normalised for the LLM. A call never
 * lists tools itself: what the refresh stored is what it offers.
 */
import { Op, type Transaction } from 'sequelize';
import { plainAll, type Database } from '../db/database';
import { mcpFunctionName, mcpToolAllowed, normaliseMcpDescription, normaliseMcpSchema, parseMcpRef } from '../shared/mcp-tools';
import type { SnapshotMcpTool } from '../../workflows/call-definitions';

export async function loadMcpTools(db: Database, refs: Set<string>, transaction?: Transaction): Promise<SnapshotMcpTool[]> {
  const parsed = [...refs].flatMap((ref) => {
    const p = parseMcpRef(ref);
    return p ? [{ ref, ...p }] : [];
  });
  if (parsed.length === 0) return [];
  const servers = plainAll(
    await db.models.McpServer.findAll({ where: { name: { [Op.in]: [...new Set(parsed.map((p) => p.server))] } }, transaction }),
  );
  const byName = new Map(servers.map((s) => [s.name, s]));
  const taken = new Set<string>();
  const tools: SnapshotMcpTool[] = [];
  for (const { ref, server: serverName, tool: toolName } of parsed) {
    const server = byName.get(serverName);
    const tool = server?.tools.find((t) => t.name === toolName);
    if (!server || !tool || !mcpToolAllowed(server, toolName)) continue;
    // Two tools whose names differ only in characters the LLM cannot take would share a name.
    let functionName = mcpFunctionName(serverName, toolName);
    for (let n = 2; taken.has(functionName); n++) functionName = `${mcpFunctionName(serverName, toolName).slice(0, 60)}_${n}`;
    taken.add(functionName);
    tools.push({
      ref,
      function_name: functionName,
      server: serverName,
      tool: toolName,
      description: normaliseMcpDescription(tool.description || `${toolName} (MCP server ${serverName})`),
      parameters: normaliseMcpSchema(tool.input_schema),
      url: server.url,
      headers_encrypted: server.headers_encrypted,
      timeout_secs: server.timeout_secs,
    });
  }
  return tools;
}
