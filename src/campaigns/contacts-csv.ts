/**
 * A campaign's results as CSV (GET /api/campaigns/{id}/contacts.csv): one row per contact in
 * upload order, read page by page so a list of 100 000 contacts streams in constant memory.
 * The columns: the contact's own (phone, state, attempts, outcome, the last call, the upload line
 * and error), then the custom parameter columns the list had, in the order first seen.
 */
import { stringify } from 'csv-stringify/sync';
import type { Database } from '../db/database';
import { contactPage } from './campaign-store';

const PAGE = 500;
const FIXED = ['phone_number', 'state', 'attempts', 'last_outcome', 'last_call_id', 'call_ids', 'timezone', 'line', 'error'];

/** Yields the CSV text in pieces: the header, then a piece per page of contacts. */
export async function* contactsCsv(db: Database, campaignId: string): AsyncGenerator<string> {
  // The parameter columns come from the whole list (one query), so every row has the same columns.
  const [keys] = (await db.sequelize.query(
    `SELECT DISTINCT jsonb_object_keys(custom_parameters) AS key FROM campaign_contacts WHERE campaign_id = :campaignId AND custom_parameters IS NOT NULL ORDER BY key`,
    { replacements: { campaignId } },
  )) as [Array<{ key: string }>, unknown];
  const params = keys.map((k) => k.key).filter((k) => !FIXED.includes(k));
  yield stringify([[...FIXED, ...params]]);
  for (let page = 1; ; page++) {
    const { contacts } = await contactPage(db, campaignId, { page, page_size: PAGE }, false);
    if (contacts.length === 0) return;
    yield stringify(
      contacts.map((c) => [
        c.phone_number,
        c.state,
        c.attempts,
        c.last_outcome ?? '',
        c.last_call_id ?? '',
        c.calls.map((a) => a.call_id).join(' '),
        c.timezone,
        c.line ?? '',
        c.error ?? '',
        ...params.map((k) => String((c.custom_parameters as Record<string, unknown> | null)?.[k] ?? '')),
      ]),
    );
    if (contacts.length < PAGE) return;
  }
}
