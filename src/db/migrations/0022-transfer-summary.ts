/**
 * Warm transfer (docs/phone-operations.md#warm-transfer): the summary the agent gave the person it
 * briefed, on the call record (null on calls without a warm transfer briefing).
 */
import { DataTypes, type QueryInterface } from 'sequelize';

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('calls', 'transfer_summary', { type: DataTypes.TEXT, allowNull: true });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('calls', 'transfer_summary');
}
