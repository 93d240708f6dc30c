import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import { jsonb, modelOptions, nullableText, requiredText, uuidPk, type Timestamps } from './common';

export interface ToolRow extends Timestamps {
  id: string;
  name: string;
  description: string;
  parameters: { properties: Record<string, { type: string; description?: string }>; required: string[] };
  webhook_url: string;
  webhook_method: 'POST' | 'GET';
  /** Custom headers often carry the client's own credentials, so they are encrypted at rest. */
  headers_encrypted: string | null;
  timeout_secs: number;
  /** The user who created it; null = the administrators' (created before ownership, or owner deleted). */
  owner_id: string | null;
}

export type ToolModel = ModelStatic<Model<ToolRow, Partial<ToolRow>>>;

export function defineToolModels(sequelize: Sequelize) {
  const Tool: ToolModel = sequelize.define(
    'Tool',
    {
      id: uuidPk(),
      name: requiredText(),
      description: requiredText(),
      parameters: jsonb({ properties: {}, required: [] }),
      webhook_url: requiredText(),
      webhook_method: { ...requiredText(), defaultValue: 'POST' },
      headers_encrypted: nullableText(),
      timeout_secs: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 10 },
      owner_id: { type: DataTypes.UUID, allowNull: true },
    },
    { ...modelOptions, tableName: 'tools' },
  );
  return { Tool };
}
