/**
 * Warm transfer (docs/phone-operations.md#warm-transfer): the summary the agent gave the person it
 * briefed, on the call record (null on calls without a warm transfer briefing); and every part of a
 * call's recording (a call whose stream came back after a transfer is recorded in several files,
 * which `recording_path`, the first, did not say).
 */
import { DataTypes, type QueryInterface } from 'sequelize';

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('calls', 'transfer_summary', { type: DataTypes.TEXT, allowNull: true });
  await qi.addColumn('calls', 'recording_parts', { type: DataTypes.JSONB, allowNull: true });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('calls', 'recording_parts');
  await qi.removeColumn('calls', 'transfer_summary');
}
