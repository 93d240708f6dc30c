/**
 * Voicemail detection (docs/phone-operations.md#voicemail-on-outbound-calls): the agent's `voicemail` setting and,
 * on each call, who answered (`human`, `machine`, `unknown`; null when the agent does not detect).
 */
import { DataTypes, type QueryInterface } from 'sequelize';

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('agents', 'voicemail', { type: DataTypes.JSON, allowNull: true });
  await qi.addColumn('calls', 'answered_by', { type: DataTypes.TEXT, allowNull: true });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('calls', 'answered_by');
  await qi.removeColumn('agents', 'voicemail');
}
