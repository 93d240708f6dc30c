/**
 * Campaigns (docs/campaigns.md): a list of contacts called by one long-lived workflow, their
 * state, every attempt (the ledger: an attempt's id is its call's id, so it is dialled once), and
 * each owner's do-not-call list.
 */
import { DataTypes, type QueryInterface } from 'sequelize';

const timestamps = () => ({
  created_at: { type: DataTypes.DATE, allowNull: false },
  updated_at: { type: DataTypes.DATE, allowNull: false },
});

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable('campaigns', {
    id: { type: DataTypes.UUID, primaryKey: true },
    name: { type: DataTypes.TEXT, allowNull: false },
    owner_id: { type: DataTypes.UUID, allowNull: true },
    agent_name: { type: DataTypes.TEXT, allowNull: false },
    provider: { type: DataTypes.TEXT, allowNull: true },
    from_number: { type: DataTypes.TEXT, allowNull: true },
    status: { type: DataTypes.TEXT, allowNull: false },
    // Why a rule paused or stopped it (circuit breaker, misconfigured agent or provider).
    status_reason: { type: DataTypes.TEXT, allowNull: true },
    timezone: { type: DataTypes.TEXT, allowNull: false },
    default_country: { type: DataTypes.TEXT, allowNull: true },
    schedule: { type: DataTypes.JSONB, allowNull: false },
    pacing: { type: DataTypes.JSONB, allowNull: false },
    retry: { type: DataTypes.JSONB, allowNull: false },
    stop_rule: { type: DataTypes.JSONB, allowNull: false },
    workflow_id: { type: DataTypes.TEXT, allowNull: false },
    started_at: { type: DataTypes.DATE, allowNull: true },
    // The circuit breaker counts failures since the last resume only.
    resumed_at: { type: DataTypes.DATE, allowNull: true },
    ended_at: { type: DataTypes.DATE, allowNull: true },
    ...timestamps(),
  });
  await qi.addIndex('campaigns', ['owner_id'], { name: 'campaigns_owner_id' });

  await qi.createTable('campaign_contacts', {
    id: { type: DataTypes.UUID, primaryKey: true },
    campaign_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'campaigns', key: 'id' }, onDelete: 'CASCADE' },
    // E.164; for an invalid row, what the upload had.
    phone_number: { type: DataTypes.TEXT, allowNull: false },
    // The contact's own, else the campaign's: the zone its calling windows are read in.
    timezone: { type: DataTypes.TEXT, allowNull: false },
    custom_parameters: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
    state: { type: DataTypes.TEXT, allowNull: false },
    attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    next_attempt_at: { type: DataTypes.DATE, allowNull: true },
    last_outcome: { type: DataTypes.TEXT, allowNull: true },
    last_call_id: { type: DataTypes.UUID, allowNull: true },
    // The upload's line (CSV) or row number (JSON), for invalid rows and support questions.
    line: { type: DataTypes.INTEGER, allowNull: true },
    error: { type: DataTypes.TEXT, allowNull: true },
    ...timestamps(),
  });
  await qi.addIndex('campaign_contacts', ['campaign_id', 'state', 'timezone'], { name: 'campaign_contacts_state' });
  // Duplicates merge: one live contact per number and campaign (invalid rows are kept as uploaded).
  await qi.sequelize.query(
    `CREATE UNIQUE INDEX campaign_contacts_number ON campaign_contacts (campaign_id, phone_number) WHERE state <> 'invalid'`,
  );

  await qi.createTable('campaign_attempts', {
    // Deterministic (campaign, contact, attempt number) and equal to the call's id.
    id: { type: DataTypes.UUID, primaryKey: true },
    campaign_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'campaigns', key: 'id' }, onDelete: 'CASCADE' },
    contact_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'campaign_contacts', key: 'id' }, onDelete: 'CASCADE' },
    attempt: { type: DataTypes.INTEGER, allowNull: false },
    // decided → dialled (the call record exists) → ended (outcome known).
    state: { type: DataTypes.TEXT, allowNull: false },
    outcome: { type: DataTypes.TEXT, allowNull: true },
    dialled_at: { type: DataTypes.DATE, allowNull: true },
    ended_at: { type: DataTypes.DATE, allowNull: true },
    ...timestamps(),
  });
  await qi.addIndex('campaign_attempts', ['contact_id', 'attempt'], { name: 'campaign_attempts_contact_attempt', unique: true });
  await qi.addIndex('campaign_attempts', ['campaign_id', 'state'], { name: 'campaign_attempts_campaign_state' });

  await qi.createTable('do_not_call', {
    id: { type: DataTypes.UUID, primaryKey: true },
    // null: the administrators' list.
    owner_id: { type: DataTypes.UUID, allowNull: true },
    phone_number: { type: DataTypes.TEXT, allowNull: false },
    note: { type: DataTypes.TEXT, allowNull: true },
    ...timestamps(),
  });
  await qi.sequelize.query(`CREATE UNIQUE INDEX do_not_call_owner_number ON do_not_call (owner_id, phone_number) NULLS NOT DISTINCT`);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('do_not_call');
  await qi.dropTable('campaign_attempts');
  await qi.dropTable('campaign_contacts');
  await qi.dropTable('campaigns');
}
