/** Campaigns' request and response schemas (docs/campaigns.md). */
import { z } from 'zod';
import { isSupportedCountry } from 'libphonenumber-js';
import { ATTEMPT_OUTCOMES, CAMPAIGN_STATUSES, CONTACT_STATES } from '../../db/models/campaigns';
import { isTimeZone } from '../../campaigns/windows';
import { PhoneNumberSchema, providerSchema } from './settings';
import { TelephonyProviderName, Timestamp } from './common';

const ContactState = z.enum(CONTACT_STATES).meta({ id: 'ContactState' });
const AttemptOutcome = z.enum(ATTEMPT_OUTCOMES).meta({ id: 'AttemptOutcome' });

export const MAX_JSON_CONTACTS = 10_000;
const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const HHMM = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$|^24:00$/, 'must be HH:MM (00:00–24:00)');

export const TimeZoneSchema = z.string().refine(isTimeZone, 'must be an IANA time zone such as Asia/Kolkata').describe('IANA time zone');
const CountrySchema = z
  .string()
  .transform((c) => c.toUpperCase())
  .refine((c) => isSupportedCountry(c), 'must be an ISO 3166 country code such as IN or US')
  .describe('ISO 3166-1 alpha-2 country for national numbers');

const WindowSchema = z
  .strictObject({ days: z.array(z.enum(DAYS)).min(1), start: HHMM, end: HHMM })
  .refine((w) => w.start < w.end, 'start must be before end')
  .describe("calling hours on these weekdays, the contact's local time; end excluded");

const ScheduleSchema = z
  .strictObject({
    start_at: z.iso.datetime({ offset: true }).nullable().default(null).describe('no call before; default: now'),
    end_at: z.iso.datetime({ offset: true }).nullable().default(null).describe('no call from then on; the campaign completes'),
    windows: z.array(WindowSchema).max(21).default([]).describe('empty: any time'),
    holidays: z.array(z.iso.date()).max(366).default([]).describe("dates without calls, in the contact's zone"),
  })
  .refine((s) => !s.start_at || !s.end_at || s.start_at < s.end_at, 'start_at must be before end_at')
  .default({ start_at: null, end_at: null, windows: [], holidays: [] });

const PacingSchema = z
  .strictObject({
    max_concurrent: z.number().int().min(1).max(1000).default(5).describe('calls of the campaign at once'),
    calls_per_minute: z.number().int().min(1).max(600).default(30).describe('new attempts per minute'),
    reserved_inbound: z.number().int().min(0).max(1000).default(0).describe("of the provider's max_concurrent lines, kept free for inbound calls"),
  })
  .default({ max_concurrent: 5, calls_per_minute: 30, reserved_inbound: 0 });

const RetrySchema = z
  .strictObject({
    max_attempts: z.number().int().min(1).max(10).default(1).describe('attempts per contact, the first included'),
    retry_on: z.array(AttemptOutcome).default(['no_answer', 'busy']).describe('outcomes that make another attempt'),
    min_interval_secs: z.number().int().min(0).max(30 * 24 * 3600).default(3600).describe("between an attempt's end and the next"),
  })
  .default({ max_attempts: 1, retry_on: ['no_answer', 'busy'], min_interval_secs: 3600 });

const StopRuleSchema = z
  .strictObject({
    failure_rate: z.number().gt(0).max(1).nullable().default(0.5).describe('share of failed attempts that pauses the campaign; null: never'),
    window_secs: z.number().int().min(10).max(24 * 3600).default(120),
    min_sample: z.number().int().min(1).max(10_000).default(5).describe('ended attempts in the window before the rule applies'),
  })
  .default({ failure_rate: 0.5, window_secs: 120, min_sample: 5 });

const ContactRow = z.record(z.string(), z.unknown());

export const ContactsInput = {
  contacts: z
    .array(ContactRow)
    .max(MAX_JSON_CONTACTS)
    .optional()
    .describe('rows: a phone column (`phone_number`, `phone`, `number` or `mobile`), optional `timezone`; other keys become the call\'s custom_parameters'),
  contacts_csv: z.string().optional().describe('the same as CSV text with a header line; line numbers in errors count the header as line 1'),
  default_country: CountrySchema.optional(),
};

export const CampaignCreateSchema = z.strictObject({
  name: z.string().trim().min(1).max(200),
  agent_name: z.string().trim().min(1).max(200).describe('the agent that talks; its outbound endpoint gives provider and number unless set here'),
  provider: providerSchema().optional(),
  from_number: PhoneNumberSchema.optional().describe('caller ID; default as for POST /api/calls/outbound'),
  timezone: TimeZoneSchema.default('UTC').describe('for contacts without their own'),
  ...ContactsInput,
  schedule: ScheduleSchema,
  pacing: PacingSchema,
  retry: RetrySchema,
  stop_rule: StopRuleSchema,
  start: z.boolean().default(true).describe('false: stays a draft until POST …/start'),
}).meta({ id: 'CampaignCreate' });

export const AddContactsSchema = z.strictObject(ContactsInput).meta({ id: 'ContactsUpload' });

/** The query of the streamed CSV upload: what the JSON upload carries beside its rows. */
export const ContactsCsvQuery = z.strictObject({ default_country: CountrySchema.optional() });

export const RejectedRowSchema = z.object({ line: z.number().int(), phone: z.string(), error: z.string() }).meta({ id: 'RejectedRow' });
export const UploadSchema = z.object({
  added: z.number().int().describe('new contacts to call'),
  duplicates: z.number().int().describe('rows merged into another row or an existing contact'),
  skipped_dnc: z.number().int().describe('on the do-not-call list: kept, never dialled'),
  invalid: z.array(RejectedRowSchema).describe('rows rejected, with their line (the first 100)'),
  invalid_count: z.number().int(),
  missing_variables: z
    .array(z.object({ name: z.string(), rows: z.number().int() }))
    .describe("the agent's context_variables that valid rows lack, with how many rows lack each: those calls get no value for the placeholder (a warning; the rows are kept)"),
}).meta({ id: 'UploadResult' });

export const ProgressSchema = z.object({
  contacts: z.number().int(),
  by_state: z.record(ContactState, z.number().int()),
  attempts: z.number().int(),
  attempts_in_flight: z.number().int(),
  answered: z.number().int(),
  answer_rate: z.number().nullable().describe('answered / ended attempts; null before any ended'),
}).meta({ id: 'CampaignProgress' });

export const CampaignSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  agent_name: z.string(),
  provider: TelephonyProviderName.nullable(),
  from_number: z.string().nullable(),
  status: z.enum(CAMPAIGN_STATUSES).meta({ id: 'CampaignStatus' }),
  status_reason: z.string().nullable().describe('why a rule paused or stopped it'),
  timezone: z.string(),
  default_country: z.string().nullable(),
  schedule: z.unknown(),
  pacing: z.unknown(),
  retry: z.unknown(),
  stop_rule: z.unknown(),
  workflow_id: z.string(),
  created_at: Timestamp,
  started_at: Timestamp.nullable(),
  ended_at: Timestamp.nullable(),
  progress: ProgressSchema,
  upload: UploadSchema.optional().describe('only in the answer to POST /api/campaigns: what the upload held'),
}).meta({ id: 'Campaign' });

/** POST /api/campaigns answers the campaign with its `upload`; one Campaign type all the same. */
export const CampaignCreatedSchema = CampaignSchema;

export const ContactSchema = z.object({
  id: z.uuid(),
  phone_number: z.string(),
  timezone: z.string(),
  custom_parameters: z.record(z.string(), z.union([z.string(), z.number()])),
  state: ContactState,
  attempts: z.number().int(),
  next_attempt_at: Timestamp.nullable(),
  last_outcome: AttemptOutcome.nullable(),
  last_call_id: z.uuid().nullable(),
  line: z.number().int().nullable(),
  error: z.string().nullable(),
  calls: z.array(z.object({ attempt: z.number().int(), call_id: z.uuid(), outcome: AttemptOutcome.nullable() })).describe("each attempt's call"),
}).meta({ id: 'Contact' });

export const ContactListQuery = z.strictObject({
  state: ContactState.optional(),
  page: z.coerce.number().int().min(1).default(1),
  page_size: z.coerce.number().int().min(1).max(500).default(50),
});

export const DncAddSchema = z.strictObject({
  phone_numbers: z.array(z.string()).max(MAX_JSON_CONTACTS).optional(),
  csv: z.string().optional().describe('CSV with a phone column'),
  default_country: CountrySchema.optional(),
  note: z.string().max(500).optional(),
  global: z.boolean().default(false).describe("administrators only: the list every campaign honours (else the caller's own)"),
}).meta({ id: 'DoNotCallAdd' });

export const DncEntrySchema = z.object({ id: z.uuid(), phone_number: z.string(), owner_id: z.uuid().nullable(), note: z.string().nullable(), created_at: Timestamp }).meta({ id: 'DoNotCallEntry' });
