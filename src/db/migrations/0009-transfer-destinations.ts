/** Transfer to a human: the agent setting `transfer_destinations` (a list, empty by default). */
import { DataTypes, type QueryInterface } from 'sequelize';

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('agents', 'transfer_destinations', { type: DataTypes.JSONB, allowNull: false, defaultValue: [] });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('agents', 'transfer_destinations');
}
