/**
 * Writing parsed contacts to PostgreSQL, a batch at a time, for both the JSON body and the streamed
 * CSV upload (contacts-stream.ts): valid rows in one INSERT … ON CONFLICT per batch, so a number the
 * campaign already has stays one contact whichever batch or upload it came in; do-not-call numbers
 * stored `skipped_dnc` (checked in the same statement); invalid rows kept with their line. The
 * tally keeps counts and only the first invalid rows, so what an upload costs in memory does not
 * grow with its length.
 */
import crypto from 'node:crypto';
import type { Transaction } from 'sequelize';
import type { Database } from '../db/database';
import type { CampaignRow } from '../db/models/campaigns';
import type { ParsedContacts, RejectedRow } from './contacts';

/** Rows per INSERT: one round trip per thousand rows. */
export const WRITE_BATCH = 1000;
const SHOWN_INVALID = 100;

export interface UploadSummary {
  added: number;
  duplicates: number;
  skipped_dnc: number;
  invalid: RejectedRow[];
  invalid_count: number;
  /** The agent's `context_variables` that some valid rows lack (a warning: the spec makes them a validation aid, not a requirement). */
  missing_variables: Array<{ name: string; rows: number }>;
}

type UploadCampaign = Pick<CampaignRow, 'id' | 'owner_id' | 'timezone'>;

/** What an upload held so far: counts, and the first SHOWN_INVALID rejected rows. */
export class UploadTally {
  private added = 0;
  private duplicates = 0;
  private skippedDnc = 0;
  private invalidCount = 0;
  private readonly invalid: RejectedRow[] = [];
  private readonly missing: Map<string, number>;

  constructor(expectedVariables: string[]) {
    this.missing = new Map(expectedVariables.map((name) => [name, 0]));
  }

  countParsed(parsed: ParsedContacts): void {
    this.duplicates += parsed.duplicates;
    this.invalidCount += parsed.invalid.length;
    for (const row of parsed.invalid) if (this.invalid.length < SHOWN_INVALID) this.invalid.push(row);
    for (const [name, rows] of this.missing) {
      this.missing.set(name, rows + parsed.contacts.filter((c) => c.customParameters[name] === undefined || c.customParameters[name] === '').length);
    }
  }

  countWritten(offered: number, inserted: Array<{ state: string }>): void {
    const dnc = inserted.filter((r) => r.state === 'skipped_dnc').length;
    this.skippedDnc += dnc;
    this.added += inserted.length - dnc;
    // Offered but not inserted: the number was already a contact of the campaign (merged into it).
    this.duplicates += offered - inserted.length;
  }

  summary(): UploadSummary {
    return {
      added: this.added,
      duplicates: this.duplicates,
      skipped_dnc: this.skippedDnc,
      invalid: [...this.invalid],
      invalid_count: this.invalidCount,
      missing_variables: [...this.missing].filter(([, rows]) => rows > 0).map(([name, rows]) => ({ name, rows })),
    };
  }
}

/**
 * One INSERT for up to WRITE_BATCH valid contacts, sent as one JSON array the server unpacks
 * (jsonb_to_recordset: a single bind parameter, cheap to serialise), with the do-not-call check in
 * the same statement (the owner's list and the global one, each an index probe). A number the
 * campaign already has is not inserted again: while that contact has not been dialled, the new row
 * fills the parameters it lacks (the first row's columns win, as within one batch). RETURNING
 * names only the rows inserted (xmax = 0).
 */
async function insertValid(db: Database, campaign: UploadCampaign, contacts: ParsedContacts['contacts'], now: Date, transaction: Transaction) {
  const rows = contacts.map((c) => ({ id: crypto.randomUUID(), phone: c.phone, tz: c.timezone ?? campaign.timezone, params: c.customParameters, line: c.line }));
  const [written] = (await db.sequelize.query(
    `INSERT INTO campaign_contacts (id, campaign_id, phone_number, timezone, custom_parameters, state, attempts, line, created_at, updated_at)
     SELECT u.id, $1, u.phone, u.tz, u.params,
            CASE WHEN EXISTS (SELECT 1 FROM do_not_call d WHERE d.owner_id IS NULL AND d.phone_number = u.phone)
                   OR EXISTS (SELECT 1 FROM do_not_call d WHERE d.owner_id = $2::uuid AND d.phone_number = u.phone)
                 THEN 'skipped_dnc' ELSE 'pending' END,
            0, u.line, $3, $3
     FROM jsonb_to_recordset($4::jsonb) AS u(id uuid, phone text, tz text, params jsonb, line int)
     ON CONFLICT (campaign_id, phone_number) WHERE state <> 'invalid'
     DO UPDATE SET custom_parameters = EXCLUDED.custom_parameters || campaign_contacts.custom_parameters, updated_at = EXCLUDED.updated_at
       WHERE campaign_contacts.state = 'pending' AND campaign_contacts.attempts = 0
     RETURNING state, (xmax = 0) AS inserted`,
    { bind: [campaign.id, campaign.owner_id, now, JSON.stringify(rows)], transaction },
  )) as [Array<{ state: string; inserted: boolean }>, unknown];
  return written.filter((r) => r.inserted);
}

/** Writes a parsed batch (any length: valid rows go WRITE_BATCH to a statement) and counts it. */
export async function writeParsed(db: Database, campaign: UploadCampaign, parsed: ParsedContacts, tally: UploadTally, now: Date, transaction: Transaction): Promise<void> {
  tally.countParsed(parsed);
  for (let i = 0; i < parsed.contacts.length; i += WRITE_BATCH) {
    const chunk = parsed.contacts.slice(i, i + WRITE_BATCH);
    tally.countWritten(chunk.length, await insertValid(db, campaign, chunk, now, transaction));
  }
  for (let i = 0; i < parsed.invalid.length; i += WRITE_BATCH) {
    await db.models.CampaignContact.bulkCreate(
      parsed.invalid.slice(i, i + WRITE_BATCH).map((r) => ({
        id: crypto.randomUUID(),
        campaign_id: campaign.id,
        phone_number: r.phone.slice(0, 100),
        timezone: campaign.timezone,
        state: 'invalid' as const,
        line: r.line,
        error: r.error,
        created_at: now,
        updated_at: now,
      })),
      { transaction },
    );
  }
}
