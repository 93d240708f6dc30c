/**
 * MCP servers as a tool source (docs/tools.md, MCP servers): the server, its headers sealed like a
 * webhook tool's, the tool list fetched by refresh (so no call ever lists tools on its turn path),
 * and the `server/tool` references of agents and flow nodes next to their `tool_ids`.
 */
import { DataTypes, type QueryInterface } from 'sequelize';

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable('mcp_servers', {
    id: { type: DataTypes.UUID, primaryKey: true },
    name: { type: DataTypes.TEXT, allowNull: false, unique: true },
    url: { type: DataTypes.TEXT, allowNull: false },
    headers_encrypted: { type: DataTypes.TEXT, allowNull: true },
    // null: every tool of the server.
    allowed_tools: { type: DataTypes.JSONB, allowNull: true },
    timeout_secs: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 10 },
    tools: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
    transport: { type: DataTypes.TEXT, allowNull: true },
    refreshed_at: { type: DataTypes.DATE, allowNull: true },
    owner_id: { type: DataTypes.UUID, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await qi.addColumn('agents', 'mcp_tools', { type: DataTypes.JSONB, allowNull: false, defaultValue: [] });
  await qi.addColumn('flow_nodes', 'mcp_tools', { type: DataTypes.JSONB, allowNull: false, defaultValue: [] });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('flow_nodes', 'mcp_tools');
  await qi.removeColumn('agents', 'mcp_tools');
  await qi.dropTable('mcp_servers');
}
