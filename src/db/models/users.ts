import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import { modelOptions, nullableText, requiredText, uuidPk, type Timestamps } from './common';

export interface UserRow extends Timestamps {
  id: string;
  email: string;
  password_hash: string;
  role: 'admin' | 'member';
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

export interface LoginFailureRow {
  id: number;
  client_key: string;
  created_at: Date;
}

export type UserModel = ModelStatic<Model<UserRow, Partial<UserRow>>>;
export type ApiKeyModel = ModelStatic<Model<ApiKeyRow, Partial<ApiKeyRow>>>;
export type PasswordResetTokenModel = ModelStatic<Model<PasswordResetTokenRow, Partial<PasswordResetTokenRow>>>;
export type LoginFailureModel = ModelStatic<Model<LoginFailureRow, Partial<LoginFailureRow>>>;

export function defineUserModels(sequelize: Sequelize) {
  const User: UserModel = sequelize.define(
    'User',
    { id: uuidPk(), email: requiredText(), password_hash: requiredText(), role: { ...requiredText(), defaultValue: 'member' } },
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
  const LoginFailure: LoginFailureModel = sequelize.define(
    'LoginFailure',
    { id: { type: DataTypes.BIGINT, primaryKey: true, autoIncrement: true }, client_key: nullableText() },
    { ...modelOptions, tableName: 'login_failures', updatedAt: false as const },
  );
  return { User, ApiKey, PasswordResetToken, LoginFailure };
}
