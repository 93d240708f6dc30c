import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import { jsonb, modelOptions, requiredText, uuidPk, type Timestamps } from './common';

/** A key a website may show: it starts web calls to one agent, from the origins it lists (docs/web-calls.md). */
export interface PublishableKeyRow extends Timestamps {
  id: string;
  agent_id: string;
  name: string;
  key_prefix: string;
  key_hash: string;
  /** Page origins (`https://shop.example`) allowed to use the key. */
  allowed_origins: string[];
  created_by: string | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export type PublishableKeyModel = ModelStatic<Model<PublishableKeyRow, Partial<PublishableKeyRow>>>;

export function definePublishableKeyModels(sequelize: Sequelize) {
  const PublishableKey: PublishableKeyModel = sequelize.define(
    'PublishableKey',
    {
      id: uuidPk(),
      agent_id: { type: DataTypes.UUID, allowNull: false },
      name: requiredText(),
      key_prefix: requiredText(),
      key_hash: requiredText(),
      allowed_origins: jsonb([]),
      created_by: { type: DataTypes.UUID, allowNull: true },
      last_used_at: { type: DataTypes.DATE, allowNull: true },
      revoked_at: { type: DataTypes.DATE, allowNull: true },
    },
    { ...modelOptions, tableName: 'publishable_keys' },
  );
  return { PublishableKey };
}
