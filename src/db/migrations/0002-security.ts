/**
 * Security (issue 8): who owns an agent or a tool (members may change only their own; rows from
 * before this migration, and those of deleted users, belong to the administrators), a token
 * version per user (a password change or reset invalidates every JWT issued before it), and login
 * attempts counted per key and window in one atomic row (replacing login_failures).
 */
import { DataTypes, type QueryInterface } from 'sequelize';

const owner = { type: DataTypes.UUID, allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' };

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('agents', 'owner_id', owner);
  await qi.addColumn('tools', 'owner_id', { ...owner });
  await qi.addColumn('users', 'token_version', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 });
  await qi.createTable('login_attempts', {
    key: { type: DataTypes.TEXT, primaryKey: true },
    window_started_at: { type: DataTypes.DATE, allowNull: false },
    attempts: { type: DataTypes.INTEGER, allowNull: false },
  });
  await qi.addIndex('login_attempts', ['window_started_at']);
  await qi.dropTable('login_failures');
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable('login_failures', {
    id: { type: DataTypes.BIGINT, autoIncrement: true, primaryKey: true },
    client_key: { type: DataTypes.TEXT, allowNull: false },
    created_at: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
  });
  await qi.addIndex('login_failures', ['client_key', 'created_at']);
  await qi.dropTable('login_attempts');
  await qi.removeColumn('users', 'token_version');
  await qi.removeColumn('tools', 'owner_id');
  await qi.removeColumn('agents', 'owner_id');
}
