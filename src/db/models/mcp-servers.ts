import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import { jsonb, modelOptions, nullableText, requiredText, uuidPk, type Timestamps } from './common';

/** A tool as the MCP server listed it at the last refresh. */
export interface McpToolRecord {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export interface McpServerRow extends Timestamps {
  id: string;
  /** Unique; the `server` of `server/tool` references, so it cannot change. */
  name: string;
  url: string;
  /** Usually the server's credentials (Authorization), so encrypted at rest like tool headers. */
  headers_encrypted: string | null;
  /** Tool names the LLM may be given; null = all. */
  allowed_tools: string[] | null;
  timeout_secs: number;
  tools: McpToolRecord[];
  /** The transport the last refresh spoke: `streamable_http` or `sse`. */
  transport: string | null;
  refreshed_at: Date | null;
  owner_id: string | null;
}

export type McpServerModel = ModelStatic<Model<McpServerRow, Partial<McpServerRow>>>;

export function defineMcpServerModels(sequelize: Sequelize) {
  const McpServer: McpServerModel = sequelize.define(
    'McpServer',
    {
      id: uuidPk(),
      name: requiredText(),
      url: requiredText(),
      headers_encrypted: nullableText(),
      allowed_tools: { type: DataTypes.JSONB, allowNull: true },
      timeout_secs: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 10 },
      tools: jsonb([]),
      transport: nullableText(),
      refreshed_at: { type: DataTypes.DATE, allowNull: true },
      owner_id: { type: DataTypes.UUID, allowNull: true },
    },
    { ...modelOptions, tableName: 'mcp_servers' },
  );
  return { McpServer };
}
