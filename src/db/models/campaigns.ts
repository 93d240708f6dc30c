/** Campaigns, their contacts and attempts, and the do-not-call list (migration 0019, docs/campaigns.md). */
import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import { jsonb, modelOptions, nullableText, requiredText, uuidPk, type Timestamps } from './common';

export const CAMPAIGN_STATUSES = ['draft', 'scheduled', 'running', 'paused', 'completed', 'cancelled', 'stopped'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];
export const CONTACT_STATES = ['pending', 'calling', 'done', 'retry_wait', 'failed', 'skipped_dnc', 'invalid'] as const;
export type ContactState = (typeof CONTACT_STATES)[number];
export const ATTEMPT_OUTCOMES = ['answered', 'no_answer', 'busy', 'failed', 'voicemail'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** A weekday's calling hours, local time of the contact: `HH:MM`. */
export interface CallingWindow {
  days: Array<'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun'>;
  start: string;
  end: string;
}

export interface CampaignSchedule {
  /** ISO instants; null: now / open-ended. */
  start_at: string | null;
  end_at: string | null;
  /** Empty: any time. */
  windows: CallingWindow[];
  /** Dates (YYYY-MM-DD, in the contact's zone) with no calls. */
  holidays: string[];
}

export interface CampaignPacing {
  max_concurrent: number;
  calls_per_minute: number;
  /** Lines of the provider's max_concurrent kept free for inbound calls. */
  reserved_inbound: number;
}

export interface CampaignRetry {
  max_attempts: number;
  retry_on: AttemptOutcome[];
  min_interval_secs: number;
}

export interface CampaignStopRule {
  /** Pause when failed / ended attempts over the window reach this share (0–1); null: never. */
  failure_rate: number | null;
  window_secs: number;
  min_sample: number;
}

export interface CampaignRow extends Timestamps {
  id: string;
  name: string;
  owner_id: string | null;
  agent_name: string;
  provider: string | null;
  from_number: string | null;
  status: CampaignStatus;
  status_reason: string | null;
  timezone: string;
  default_country: string | null;
  schedule: CampaignSchedule;
  pacing: CampaignPacing;
  retry: CampaignRetry;
  stop_rule: CampaignStopRule;
  workflow_id: string;
  started_at: Date | null;
  resumed_at: Date | null;
  ended_at: Date | null;
}

export interface CampaignContactRow extends Timestamps {
  id: string;
  campaign_id: string;
  phone_number: string;
  timezone: string;
  custom_parameters: Record<string, string | number>;
  state: ContactState;
  attempts: number;
  next_attempt_at: Date | null;
  last_outcome: AttemptOutcome | null;
  last_call_id: string | null;
  line: number | null;
  error: string | null;
}

export interface CampaignAttemptRow extends Timestamps {
  id: string;
  campaign_id: string;
  contact_id: string;
  attempt: number;
  state: 'decided' | 'dialled' | 'ended';
  outcome: AttemptOutcome | null;
  dialled_at: Date | null;
  ended_at: Date | null;
}

export interface DoNotCallRow extends Timestamps {
  id: string;
  owner_id: string | null;
  phone_number: string;
  note: string | null;
}

export type CampaignModel = ModelStatic<Model<CampaignRow, Partial<CampaignRow>>>;
export type CampaignContactModel = ModelStatic<Model<CampaignContactRow, Partial<CampaignContactRow>>>;
export type CampaignAttemptModel = ModelStatic<Model<CampaignAttemptRow, Partial<CampaignAttemptRow>>>;
export type DoNotCallModel = ModelStatic<Model<DoNotCallRow, Partial<DoNotCallRow>>>;

const date = () => ({ type: DataTypes.DATE, allowNull: true });

export function defineCampaignModels(sequelize: Sequelize) {
  const Campaign: CampaignModel = sequelize.define(
    'Campaign',
    {
      id: uuidPk(),
      name: requiredText(),
      owner_id: { type: DataTypes.UUID, allowNull: true },
      agent_name: requiredText(),
      provider: nullableText(),
      from_number: nullableText(),
      status: requiredText(),
      status_reason: nullableText(),
      timezone: requiredText(),
      default_country: nullableText(),
      schedule: jsonb({}),
      pacing: jsonb({}),
      retry: jsonb({}),
      stop_rule: jsonb({}),
      workflow_id: requiredText(),
      started_at: date(),
      resumed_at: date(),
      ended_at: date(),
    },
    { ...modelOptions, tableName: 'campaigns' },
  );
  const CampaignContact: CampaignContactModel = sequelize.define(
    'CampaignContact',
    {
      id: uuidPk(),
      campaign_id: { type: DataTypes.UUID, allowNull: false },
      phone_number: requiredText(),
      timezone: requiredText(),
      custom_parameters: jsonb({}),
      state: requiredText(),
      attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      next_attempt_at: date(),
      last_outcome: nullableText(),
      last_call_id: { type: DataTypes.UUID, allowNull: true },
      line: { type: DataTypes.INTEGER, allowNull: true },
      error: nullableText(),
    },
    { ...modelOptions, tableName: 'campaign_contacts' },
  );
  const CampaignAttempt: CampaignAttemptModel = sequelize.define(
    'CampaignAttempt',
    {
      id: { type: DataTypes.UUID, primaryKey: true },
      campaign_id: { type: DataTypes.UUID, allowNull: false },
      contact_id: { type: DataTypes.UUID, allowNull: false },
      attempt: { type: DataTypes.INTEGER, allowNull: false },
      state: requiredText(),
      outcome: nullableText(),
      dialled_at: date(),
      ended_at: date(),
    },
    { ...modelOptions, tableName: 'campaign_attempts' },
  );
  const DoNotCall: DoNotCallModel = sequelize.define(
    'DoNotCall',
    { id: uuidPk(), owner_id: { type: DataTypes.UUID, allowNull: true }, phone_number: requiredText(), note: nullableText() },
    { ...modelOptions, tableName: 'do_not_call' },
  );
  return { Campaign, CampaignContact, CampaignAttempt, DoNotCall };
}
