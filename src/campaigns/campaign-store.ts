/**
 * Campaigns in PostgreSQL: writing an uploaded contact list (invalid rows kept with their line,
 * duplicates merged, do-not-call numbers marked never to dial), progress counts, the JSON shape.
 */
import { QueryTypes } from 'sequelize';
import { plainAll, type Database } from '../db/database';
import { CONTACT_STATES, type CampaignRow, type ContactState } from '../db/models/campaigns';
import { ContactListError, csvRows, parseContacts } from './contacts';
import { UploadTally, writeParsed, type UploadSummary } from './contact-writer';

export type { UploadSummary } from './contact-writer';

export interface ContactsUpload {
  contacts?: Array<Record<string, unknown>>;
  contacts_csv?: string;
  default_country?: string;
}

const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Column names become parameter names (placeholders in the prompt): letters, digits and _. */
export function assertColumnNames(columns: string[], line: number): void {
  const bad = columns.find((k) => !PARAM_NAME.test(k));
  if (bad) throw new ContactListError(`contacts: column ${JSON.stringify(bad)} (line ${line}): names are letters, digits and _`);
}

/** Rows of the upload, each with its line: CSV lines count the header as 1, JSON rows from 1. */
export function uploadRows(upload: ContactsUpload): Array<{ line: number; row: Record<string, unknown> }> {
  if (upload.contacts && upload.contacts_csv !== undefined) throw new ContactListError('give contacts or contacts_csv, not both');
  const rows = upload.contacts_csv !== undefined ? csvRows(upload.contacts_csv) : (upload.contacts ?? []).map((row, i) => ({ line: i + 1, row }));
  for (const { line, row } of rows) assertColumnNames(Object.keys(row), line);
  return rows;
}

/** Stores a list given whole (the JSON body), in one transaction: all of it or, on an error, none. */
export async function storeContacts(
  db: Database,
  campaign: Pick<CampaignRow, 'id' | 'owner_id' | 'timezone' | 'default_country'>,
  upload: ContactsUpload,
  expectedVariables: string[] = [],
): Promise<UploadSummary> {
  const parsed = parseContacts(uploadRows(upload), upload.default_country ?? campaign.default_country);
  const tally = new UploadTally(expectedVariables);
  await db.sequelize.transaction((transaction) => writeParsed(db, campaign, parsed, tally, new Date(), transaction));
  return tally.summary();
}

export async function campaignProgress(db: Database, campaignId: string) {
  const states = await db.sequelize.query<{ state: ContactState; n: string }>(
    `SELECT state, count(*) AS n FROM campaign_contacts WHERE campaign_id = :campaignId GROUP BY state`,
    { replacements: { campaignId }, type: QueryTypes.SELECT },
  );
  const [attempts] = await db.sequelize.query<{ total: string; in_flight: string; ended: string; answered: string }>(
    `SELECT count(*) AS total, count(*) FILTER (WHERE state <> 'ended') AS in_flight, count(*) FILTER (WHERE state = 'ended') AS ended,
            count(*) FILTER (WHERE outcome = 'answered') AS answered
     FROM campaign_attempts WHERE campaign_id = :campaignId`,
    { replacements: { campaignId }, type: QueryTypes.SELECT },
  );
  const byState = Object.fromEntries(CONTACT_STATES.map((s) => [s, 0])) as Record<ContactState, number>;
  for (const s of states) byState[s.state] = Number(s.n);
  const ended = Number(attempts.ended);
  return {
    contacts: Object.values(byState).reduce((a, b) => a + b, 0),
    by_state: byState,
    attempts: Number(attempts.total),
    attempts_in_flight: Number(attempts.in_flight),
    answered: Number(attempts.answered),
    answer_rate: ended ? Number(attempts.answered) / ended : null,
  };
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export async function campaignJson(db: Database, c: CampaignRow) {
  return {
    id: c.id,
    name: c.name,
    agent_name: c.agent_name,
    provider: c.provider,
    from_number: c.from_number,
    status: c.status,
    status_reason: c.status_reason,
    timezone: c.timezone,
    default_country: c.default_country,
    schedule: c.schedule,
    pacing: c.pacing,
    retry: c.retry,
    stop_rule: c.stop_rule,
    workflow_id: c.workflow_id,
    created_at: iso(c.created_at)!,
    started_at: iso(c.started_at),
    ended_at: iso(c.ended_at),
    progress: await campaignProgress(db, c.id),
  };
}

export async function contactPage(db: Database, campaignId: string, q: { state?: ContactState; page: number; page_size: number }, withTotal = true) {
  const where = { campaign_id: campaignId, ...(q.state ? { state: q.state } : {}) };
  const find = { where, order: [['line', 'ASC'], ['created_at', 'ASC'], ['id', 'ASC']] as Array<[string, string]>, limit: q.page_size, offset: (q.page - 1) * q.page_size };
  // The export reads every page: counting the whole list again for each would be wasted work.
  const { rows, count } = withTotal ? await db.models.CampaignContact.findAndCountAll(find) : { rows: await db.models.CampaignContact.findAll(find), count: -1 };
  const contacts = plainAll(rows);
  const attempts = contacts.length
    ? plainAll(await db.models.CampaignAttempt.findAll({ where: { contact_id: contacts.map((c) => c.id) }, order: [['attempt', 'ASC']] }))
    : [];
  return {
    total: count,
    contacts: contacts.map((c) => ({
      id: c.id,
      phone_number: c.phone_number,
      timezone: c.timezone,
      custom_parameters: c.custom_parameters,
      state: c.state,
      attempts: c.attempts,
      next_attempt_at: iso(c.next_attempt_at),
      last_outcome: c.last_outcome,
      last_call_id: c.last_call_id,
      line: c.line,
      error: c.error,
      calls: attempts.filter((a) => a.contact_id === c.id && a.state !== 'decided').map((a) => ({ attempt: a.attempt, call_id: a.id, outcome: a.outcome })),
    })),
  };
}
