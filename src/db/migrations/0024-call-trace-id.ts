/**
 * The call's OpenTelemetry trace id (docs/tracing.md): 32 hex digits, set when the call's workflow
 * starts while tracing is on; NULL otherwise, and for calls made before this migration.
 */
import { DataTypes, type QueryInterface } from 'sequelize';

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('calls', 'trace_id', { type: DataTypes.TEXT, allowNull: true });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('calls', 'trace_id');
}
