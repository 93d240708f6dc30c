/**
 * The campaign form's state and the POST /api/campaigns body it makes: only the fields the API
 * takes (src/api/schemas/campaigns.ts); a field left empty is not sent, so the API's default applies.
 */
import type { CampaignCreate } from '../api/types';

export type Weekday = NonNullable<NonNullable<CampaignCreate['schedule']>['windows']>[number]['days'][number];
export type RetryOutcome = NonNullable<NonNullable<CampaignCreate['retry']>['retry_on']>[number];

export interface WindowRow {
  days: Weekday[];
  start: string;
  end: string;
}

export interface CampaignFormState {
  name: string;
  agentName: string | null;
  /** Caller ID; '' for the default (the agent's outbound number, else the provider's). */
  fromNumber: string;
  timezone: string;
  defaultCountry: string;
  windows: WindowRow[];
  /** Dates without calls, YYYY-MM-DD, separated by commas or spaces. */
  holidays: string;
  /** datetime-local values (the browser's zone), '' for none. */
  startAt: string;
  endAt: string;
  maxConcurrent: number | string;
  callsPerMinute: number | string;
  reservedInbound: number | string;
  maxAttempts: number | string;
  retryOn: RetryOutcome[];
  minIntervalMins: number | string;
  start: boolean;
}

// Chromium lists some zones by their old ICU names; the current IANA names are what people type.
const CURRENT_NAMES: Record<string, string> = {
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Rangoon': 'Asia/Yangon',
  'Europe/Kiev': 'Europe/Kyiv',
  'America/Godthab': 'America/Nuuk',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
};

export const browserZone = () => {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  return CURRENT_NAMES[zone] ?? zone;
};

export const emptyCampaignForm = (): CampaignFormState => ({
  name: '',
  agentName: null,
  fromNumber: '',
  timezone: browserZone(),
  defaultCountry: '',
  windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '18:00' }],
  holidays: '',
  startAt: '',
  endAt: '',
  maxConcurrent: 5,
  callsPerMinute: 30,
  reservedInbound: 0,
  maxAttempts: 1,
  retryOn: ['no_answer', 'busy'],
  minIntervalMins: 60,
  start: true,
});

/** Suggestions for a time zone: every IANA zone the browser knows (UTC first); the API checks what is sent. */
export function timeZones(): string[] {
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return [...new Set(['UTC', ...zones.map((z) => CURRENT_NAMES[z] ?? z)])];
}

const num = (v: number | string) => (v === '' ? undefined : Number(v));
const instant = (local: string) => (local ? new Date(local).toISOString() : null);

export function campaignBody(form: CampaignFormState, contactsCsv: string): CampaignCreate {
  const holidays = form.holidays.split(/[\s,]+/).filter(Boolean);
  const minInterval = num(form.minIntervalMins);
  return {
    name: form.name,
    agent_name: form.agentName ?? '',
    ...(form.fromNumber.trim() ? { from_number: form.fromNumber.trim() } : {}),
    timezone: form.timezone,
    ...(form.defaultCountry.trim() ? { default_country: form.defaultCountry.trim() } : {}),
    contacts_csv: contactsCsv,
    schedule: { start_at: instant(form.startAt), end_at: instant(form.endAt), windows: form.windows, holidays },
    pacing: { max_concurrent: num(form.maxConcurrent), calls_per_minute: num(form.callsPerMinute), reserved_inbound: num(form.reservedInbound) },
    retry: { max_attempts: num(form.maxAttempts), retry_on: form.retryOn, min_interval_secs: minInterval === undefined ? undefined : Math.round(minInterval * 60) },
    start: form.start,
  };
}

/** The actions the API allows from each status (src/campaigns/campaign-control.ts, ALLOWED_FROM). */
export const ACTIONS = ['start', 'pause', 'resume', 'cancel'] as const;
export type CampaignAction = (typeof ACTIONS)[number];
const ALLOWED_FROM: Record<CampaignAction, string[]> = {
  start: ['draft'],
  pause: ['scheduled', 'running'],
  resume: ['paused', 'stopped'],
  cancel: ['draft', 'scheduled', 'running', 'paused', 'stopped'],
};
export const allowedActions = (status: string) => ACTIONS.filter((a) => ALLOWED_FROM[a].includes(status));

export const CAMPAIGN_STATUS_COLOR: Record<string, string> = {
  draft: 'gray',
  scheduled: 'cyan',
  running: 'blue',
  paused: 'yellow',
  completed: 'green',
  cancelled: 'dark',
  stopped: 'red',
};

export const CONTACT_STATE_COLOR: Record<string, string> = {
  pending: 'gray',
  calling: 'blue',
  done: 'green',
  retry_wait: 'yellow',
  failed: 'red',
  skipped_dnc: 'orange',
  invalid: 'pink',
};

/** Progress as the list shows it: dialled (attempts), completed, failed, remaining. */
export function progressCounts(p: { contacts: number; attempts: number; attempts_in_flight: number; by_state: Partial<Record<string, number>> }) {
  const s = (k: string) => p.by_state[k] ?? 0;
  return {
    dialled: p.attempts,
    inFlight: p.attempts_in_flight,
    completed: s('done'),
    failed: s('failed'),
    remaining: s('pending') + s('calling') + s('retry_wait'),
    notCalled: s('skipped_dnc') + s('invalid'),
    total: p.contacts,
  };
}
