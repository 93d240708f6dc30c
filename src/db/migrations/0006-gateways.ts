/**
 * Media gateway presence (docs/call-lifecycle.md): one row per gateway process, rewritten by the
 * gateway every second with its load, read by the API (admission) and the workers' watchdog
 * (liveness) — a path that does not go through Temporal. Calls remember their gateway.
 */
import { DataTypes, type QueryInterface } from 'sequelize';

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable('gateways', {
    // The gateway's Temporal task queue: unique per process.
    id: { type: DataTypes.TEXT, primaryKey: true },
    url: { type: DataTypes.TEXT, allowNull: true },
    state: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'active' },
    started_at: { type: DataTypes.DATE, allowNull: false },
    // Always the database's clock (now()), so gateway clocks never matter.
    seen_at: { type: DataTypes.DATE, allowNull: false },
    calls: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    max_calls: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    load: { type: DataTypes.DOUBLE, allowNull: false, defaultValue: 0 },
    loop_lag_ms: { type: DataTypes.DOUBLE, allowNull: false, defaultValue: 0 },
    cpu: { type: DataTypes.DOUBLE, allowNull: false, defaultValue: 0 },
    admitting: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    lost_at: { type: DataTypes.DATE, allowNull: true },
    // The watchdog told every live call of a lost gateway (its workflows probe and end them).
    lost_handled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
  });
  await qi.addIndex('gateways', ['state', 'seen_at'], { name: 'gateways_state_seen_at' });
  await qi.addColumn('calls', 'gateway_id', { type: DataTypes.TEXT, allowNull: true });
  // The watchdog's question: the live calls of one gateway.
  await qi.sequelize.query(
    `CREATE INDEX calls_gateway_live ON calls (gateway_id) WHERE gateway_id IS NOT NULL AND status IN ('ringing', 'in_progress')`,
  );
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP INDEX IF EXISTS calls_gateway_live');
  await qi.removeColumn('calls', 'gateway_id');
  await qi.dropTable('gateways');
}
