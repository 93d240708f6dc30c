/**
 * The room a gateway offers, projected from what its calls cost (src/gateway/admission/room-estimate.ts):
 * calls it can hold now, counting those it holds. NULL from a gateway of an older version, which
 * offers max_calls while admitting, as before.
 */
import { DataTypes, type QueryInterface } from 'sequelize';

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('gateways', 'room', { type: DataTypes.INTEGER, allowNull: true });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('gateways', 'room');
}
