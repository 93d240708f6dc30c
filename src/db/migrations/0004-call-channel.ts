/**
 * How a call's audio reaches the platform (`voice`, `text`, `manual`) gets a column of its own.
 * It used to be written into `metadata.channel`, overwriting a client's own `channel` key; calls
 * recorded that way are moved over.
 */
import { DataTypes, type QueryInterface } from 'sequelize';

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('calls', 'channel', { type: DataTypes.TEXT, allowNull: false, defaultValue: 'voice' });
  await qi.sequelize.query(
    `UPDATE calls SET channel = metadata->>'channel', metadata = metadata - 'channel'
     WHERE metadata->>'channel' IN ('voice', 'text', 'manual')`,
  );
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query(`UPDATE calls SET metadata = metadata || jsonb_build_object('channel', channel)`);
  await qi.removeColumn('calls', 'channel');
}
