/**
 * Reading a campaign's contact list (CSV text or JSON rows): the phone column normalised to E.164
 * with libphonenumber-js (a national number needs the default country), an optional time-zone
 * column, every other column the call's custom_parameters. Bad rows are kept with their line and
 * the reason; a number twice is one contact (the first row's columns win, later rows fill gaps).
 */
import { parse } from 'csv-parse/sync';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import { isTimeZone } from './windows';

export const PHONE_COLUMNS = ['phone_number', 'phone', 'number', 'mobile'];
export const TIMEZONE_COLUMNS = ['timezone', 'time_zone', 'tz'];

export interface ParsedContact {
  phone: string;
  timezone: string | null;
  customParameters: Record<string, string | number>;
  line: number;
}

export interface RejectedRow {
  line: number;
  /** What the row had in its phone column ('' when none). */
  phone: string;
  error: string;
}

export interface ParsedContacts {
  contacts: ParsedContact[];
  invalid: RejectedRow[];
  /** Rows merged into an earlier row with the same number. */
  duplicates: number;
}

export class ContactListError extends Error {}

/** E.164 for a number, or null when it is not a valid phone number. */
export function normalisePhone(raw: string, defaultCountry?: string | null): string | null {
  const parsed = parsePhoneNumberFromString(raw.trim(), (defaultCountry ?? undefined) as CountryCode | undefined);
  return parsed?.isValid() ? parsed.number : null;
}

/** How a contact list's CSV is read, the same for a body of JSON text and a streamed upload. */
export const CSV_OPTIONS = {
  columns: (header: string[]) => header.map((h) => h.trim().toLowerCase()),
  skip_empty_lines: true,
  trim: true,
  bom: true,
  info: true,
  relax_column_count: false,
} as const;

/** CSV text to rows keyed by header (lower-cased, trimmed), each with its line in the file. */
export function csvRows(text: string): Array<{ line: number; row: Record<string, unknown> }> {
  let records: Array<{ record: Record<string, string>; info: { lines: number } }>;
  try {
    records = parse(text, CSV_OPTIONS);
  } catch (err) {
    throw new ContactListError(`contacts_csv: ${(err as Error).message}`);
  }
  return records.map(({ record, info }) => ({ line: info.lines, row: record }));
}

/** A list without a phone column cannot be called at all: refused as a whole. */
export function assertPhoneColumn(columns: string[]): void {
  if (!PHONE_COLUMNS.some((c) => columns.includes(c))) {
    throw new ContactListError(`contacts: no phone column (one of ${PHONE_COLUMNS.join(', ')})`);
  }
}

export function parseContacts(rows: Array<{ line: number; row: Record<string, unknown> }>, defaultCountry?: string | null): ParsedContacts {
  const byPhone = new Map<string, ParsedContact>();
  const invalid: RejectedRow[] = [];
  let duplicates = 0;
  if (rows.length) assertPhoneColumn(Object.keys(rows[0].row));
  for (const { line, row } of rows) {
    const phoneKey = PHONE_COLUMNS.find((c) => c in row);
    const rawPhone = phoneKey ? String(row[phoneKey] ?? '') : '';
    const phone = rawPhone ? normalisePhone(rawPhone, defaultCountry) : null;
    if (!phone) {
      const hint = rawPhone.startsWith('+') || defaultCountry ? '' : ' (a national number needs default_country)';
      invalid.push({ line, phone: rawPhone, error: rawPhone ? `not a valid phone number${hint}` : 'no phone number' });
      continue;
    }
    const tzKey = TIMEZONE_COLUMNS.find((c) => c in row);
    const timezone = tzKey && row[tzKey] !== '' && row[tzKey] != null ? String(row[tzKey]) : null;
    if (timezone && !isTimeZone(timezone)) {
      invalid.push({ line, phone: rawPhone, error: `unknown time zone ${timezone}` });
      continue;
    }
    const customParameters: Record<string, string | number> = {};
    let badValue: string | null = null;
    for (const [key, value] of Object.entries(row)) {
      if (key === phoneKey || key === tzKey || value === '' || value == null) continue;
      if (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) customParameters[key] = value;
      else badValue = key;
    }
    if (badValue) {
      invalid.push({ line, phone: rawPhone, error: `${badValue}: values must be strings or numbers` });
      continue;
    }
    const earlier = byPhone.get(phone);
    if (earlier) {
      duplicates++;
      earlier.customParameters = { ...customParameters, ...earlier.customParameters };
      earlier.timezone ??= timezone;
      continue;
    }
    byPhone.set(phone, { phone, timezone, customParameters, line });
  }
  return { contacts: [...byPhone.values()], invalid, duplicates };
}
