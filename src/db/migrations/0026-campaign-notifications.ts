/**
 * Campaign webhooks (docs/campaigns.md, "Webhooks"): `status_seq` counts the campaign's status
 * changes — kept by a trigger, so no writer of the status (the API's actions, the step's
 * completion and circuit breaker) can change it without a new number — and `notified_seq` /
 * `notified_status` say which change the agent's webhook was last sent. The delivery of change N
 * has a workflow id of its own, so sending it again is harmless and a change is never skipped.
 */
import { DataTypes, type QueryInterface } from 'sequelize';

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('campaigns', 'status_seq', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 });
  await qi.addColumn('campaigns', 'notified_seq', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 });
  await qi.addColumn('campaigns', 'notified_status', { type: DataTypes.TEXT, allowNull: true });
  await qi.sequelize.query(`
    CREATE FUNCTION campaigns_count_status() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        NEW.status_seq := 1;
      ELSIF NEW.status IS DISTINCT FROM OLD.status THEN
        NEW.status_seq := OLD.status_seq + 1;
      END IF;
      RETURN NEW;
    END $$`);
  await qi.sequelize.query(`CREATE TRIGGER campaigns_status_seq BEFORE INSERT OR UPDATE OF status ON campaigns FOR EACH ROW EXECUTE FUNCTION campaigns_count_status()`);
  // Campaigns from before: their current status counts as sent.
  await qi.sequelize.query(`UPDATE campaigns SET status_seq = 1, notified_seq = 1, notified_status = status`);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP TRIGGER IF EXISTS campaigns_status_seq ON campaigns');
  await qi.sequelize.query('DROP FUNCTION IF EXISTS campaigns_count_status()');
  await qi.removeColumn('campaigns', 'notified_status');
  await qi.removeColumn('campaigns', 'notified_seq');
  await qi.removeColumn('campaigns', 'status_seq');
}
