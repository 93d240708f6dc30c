/**
 * A campaign's contact list in the browser: read only to show the column mapping and a preview.
 * The API reads the list itself (docs/campaigns.md) and is the judge of every row; what goes to it
 * is the user's CSV text with only its header line rewritten to the mapped column names, so the
 * line numbers of the rows it rejects are the lines of the user's own file.
 */

/** Column names the API takes as the phone and the time zone (src/campaigns/contacts.ts). */
export const PHONE_COLUMNS = ['phone_number', 'phone', 'number', 'mobile'];
export const TIMEZONE_COLUMNS = ['timezone', 'time_zone', 'tz'];

export interface CsvRecord {
  /** The file's line where the record starts (the header is line 1). */
  line: number;
  fields: string[];
}

export interface CsvFile {
  header: string[];
  records: CsvRecord[];
  /** Where the header record ends in the text (before its line break). */
  headerEnd: number;
  /** The text without a byte-order mark. */
  text: string;
}

/** RFC 4180 CSV: quoted fields with "" escapes and line breaks, CRLF or LF; empty lines skipped (as the API does). */
export function parseCsv(input: string): CsvFile {
  const text = input.startsWith('\uFEFF') ? input.slice(1) : input;
  const records: Array<CsvRecord & { end: number }> = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  let touched = false;
  const endRecord = (end: number) => {
    fields.push(field);
    if (touched) records.push({ line: start, fields: fields.map((f) => f.trim()), end });
    fields = [];
    field = '';
    touched = false;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else {
        if (ch === '\n') line++;
        field += ch;
      }
    } else if (ch === '"') {
      quoted = true;
      touched = true;
    } else if (ch === ',') {
      fields.push(field);
      field = '';
      touched = true;
    } else if (ch === '\n' || ch === '\r') {
      endRecord(i);
      if (ch === '\r' && text[i + 1] === '\n') i++;
      line++;
      start = line;
    } else {
      field += ch;
      touched = true;
    }
  }
  if (quoted) throw new Error('the file ends inside a quoted field');
  endRecord(text.length);
  const [head, ...rest] = records;
  if (!head) throw new Error('the file is empty');
  return { header: head.fields.map((h) => h.toLowerCase()), records: rest.map(({ line: l, fields: f }) => ({ line: l, fields: f })), headerEnd: head.end, text };
}

export interface ColumnMapping {
  /** Index of the phone column. */
  phone: number | null;
  /** Index of the time-zone column, null: the campaign's zone for everyone. */
  timezone: number | null;
}

/** The mapping the API itself would make from the column names. */
export function guessMapping(header: string[]): ColumnMapping {
  const find = (names: string[]) => {
    for (const n of names) if (header.includes(n)) return header.indexOf(n);
    return null;
  };
  return { phone: find(PHONE_COLUMNS), timezone: find(TIMEZONE_COLUMNS) };
}

/** A column name as a custom parameter name: letters, digits and _ (what the API accepts). */
function parameterName(raw: string, index: number): string {
  const name = raw.replace(/[^a-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');
  if (!name) return `column_${index + 1}`;
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

/**
 * The header sent to the API: the phone column named `phone_number`, the time-zone column
 * `timezone`, every other column its name as a parameter. A name the API would take as a phone
 * or zone column of its own gets `_column` appended, so only the columns chosen here are read as such.
 */
export function mappedHeader(header: string[], mapping: ColumnMapping): string[] {
  const used = new Set<string>();
  return header.map((raw, i) => {
    if (i === mapping.phone) return 'phone_number';
    if (i === mapping.timezone) return 'timezone';
    let name = parameterName(raw, i);
    if (PHONE_COLUMNS.includes(name) || TIMEZONE_COLUMNS.includes(name)) name = `${name}_column`;
    let unique = name;
    for (let n = 2; used.has(unique) || unique === 'phone_number' || unique === 'timezone'; n++) unique = `${name}_${n}`;
    used.add(unique);
    return unique;
  });
}

/** The CSV text for `contacts_csv`: the user's file with the mapped header line. */
export function mappedCsv(file: CsvFile, mapping: ColumnMapping): string {
  return mappedHeader(file.header, mapping).join(',') + file.text.slice(file.headerEnd);
}

export interface PreviewRow {
  line: number;
  phone: string;
  timezone: string;
  parameters: Array<[string, string]>;
  /** What the browser can already tell is wrong (the API decides; this is a hint). */
  problem: string | null;
}

export function previewRows(file: CsvFile, mapping: ColumnMapping, limit: number): PreviewRow[] {
  const names = mappedHeader(file.header, mapping);
  return file.records.slice(0, limit).map(({ line, fields }) => ({
    line,
    phone: mapping.phone === null ? '' : (fields[mapping.phone] ?? ''),
    timezone: mapping.timezone === null ? '' : (fields[mapping.timezone] ?? ''),
    parameters: names.flatMap((n, i): Array<[string, string]> => (i === mapping.phone || i === mapping.timezone || !fields[i] ? [] : [[n, fields[i]!]])),
    problem:
      fields.length !== file.header.length
        ? `${fields.length} fields, the header has ${file.header.length}`
        : mapping.phone !== null && !fields[mapping.phone]
          ? 'no phone number'
          : null,
  }));
}
