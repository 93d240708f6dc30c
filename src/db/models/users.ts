import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import { modelOptions, requiredText, uuidPk, type Timestamps } from './common';

export interface UserRow extends Timestamps {
  id: string;
  email: string;
  password_hash: string;
  role: 'admin' | 'member';
  /** Part of every JWT; raised by a password change or reset, which invalidates older tokens. */
  token_version: number;
}

export interface ApiKeyRow extends Timestamps {
  id: string;
  user_id: string;
  name: string;
  key_prefix: string;
  key_hash: string;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export interface PasswordResetTokenRow extends Timestamps {
  id: string;
  user_id: string;
  token_hash: string;
  expires_at: Date;
  used_at: Date | null;
}

export type UserModel = ModelStatic<Model<UserRow, Partial<UserRow>>>;
export type ApiKeyModel = ModelStatic<Model<ApiKeyRow, Partial<ApiKeyRow>>>;
export type PasswordResetTokenModel = ModelStatic<Model<PasswordResetTokenRow, Partial<PasswordResetTokenRow>>>;

export function defineUserModels(sequelize: Sequelize) {
  const User: UserModel = sequelize.define(
    'User',
    {
      id: uuidPk(),
      email: requiredText(),
      password_hash: requiredText(),
      role: { ...requiredText(), defaultValue: 'member' },
      token_version: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    },
    { ...modelOptions, tableName: 'users' },
  );
  const ApiKey: ApiKeyModel = sequelize.define(
    'ApiKey',
    {
      id: uuidPk(),
      user_id: { type: DataTypes.UUID, allowNull: false },
      name: requiredText(),
      key_prefix: requiredText(),
      key_hash: requiredText(),
      last_used_at: { type: DataTypes.DATE, allowNull: true },
      revoked_at: { type: DataTypes.DATE, allowNull: true },
    },
    { ...modelOptions, tableName: 'api_keys' },
  );
  const PasswordResetToken: PasswordResetTokenModel = sequelize.define(
    'PasswordResetToken',
    {
      id: uuidPk(),
      user_id: { type: DataTypes.UUID, allowNull: false },
      token_hash: requiredText(),
      expires_at: { type: DataTypes.DATE, allowNull: false },
      used_at: { type: DataTypes.DATE, allowNull: true },
    },
    { ...modelOptions, tableName: 'password_reset_tokens' },
  );
  return { User, ApiKey, PasswordResetToken };
}
