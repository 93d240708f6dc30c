/**
 * Publishable keys (docs/web-calls.md): a key per agent that a website may show, which can only
 * start web calls to that agent from the origins it lists. Stored as a SHA-256 hash, like API keys.
 */
import { DataTypes, type QueryInterface } from 'sequelize';

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable('publishable_keys', {
    id: { type: DataTypes.UUID, primaryKey: true },
    agent_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'agents', key: 'id' }, onDelete: 'CASCADE' },
    name: { type: DataTypes.TEXT, allowNull: false },
    // The first characters, to tell keys apart in the dashboard; the rest is only hashed.
    key_prefix: { type: DataTypes.TEXT, allowNull: false },
    key_hash: { type: DataTypes.TEXT, allowNull: false, unique: true },
    allowed_origins: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
    created_by: { type: DataTypes.UUID, allowNull: true },
    last_used_at: { type: DataTypes.DATE, allowNull: true },
    revoked_at: { type: DataTypes.DATE, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await qi.addIndex('publishable_keys', ['agent_id'], { name: 'publishable_keys_agent_id' });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('publishable_keys');
}
