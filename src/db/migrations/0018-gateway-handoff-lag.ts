/**
 * The hand-off lag a gateway reads (src/gateway/admission/handoff-lag.ts): the longest a call
 * connected to it waited for its workflow's first request over the last second. NULL from a
 * gateway of an older version, which does not measure it.
 */
import { DataTypes, type QueryInterface } from 'sequelize';

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('gateways', 'handoff_lag_ms', { type: DataTypes.REAL, allowNull: true });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('gateways', 'handoff_lag_ms');
}
