/**
 * A large contact list made on the fly for the streamed-upload tests: Indian national mobiles
 * (read with default_country=IN), with invalid rows, duplicates (in the same thousand rows and in
 * an earlier one) and do-not-call numbers at fixed places, so the expected answer is computed from
 * the plan, and the CSV is produced a few hundred lines at a time (never whole in memory).
 */
import { Readable } from 'node:stream';

export interface PlannedRow {
  /** The row's line in the file (the header is line 1). */
  line: number;
  phone: string;
  kind: 'valid' | 'invalid' | 'duplicate';
  /** Its number is on the do-not-call list. */
  dnc: boolean;
  amountDue: string;
}

const mobile = (i: number) => `9876${String(i).padStart(6, '0')}`;
const isInvalid = (i: number) => i % 700 === 699;

/** Row i (from 0) of a list: what it holds and what the upload should make of it. */
export function plannedRow(i: number): PlannedRow {
  const line = i + 2;
  const amountDue = i % 10 === 3 ? '' : String(100 + (i % 900));
  if (isInvalid(i)) return { line, phone: `12-${i}`, kind: 'invalid', dnc: false, amountDue };
  // The same number as a row more than a thousand rows back (another batch) or the row before (this one).
  if (i >= 1500 && i % 500 === 250 && !isInvalid(i - 1250)) return { line, phone: mobile(i - 1250), kind: 'duplicate', dnc: plannedRow(i - 1250).dnc, amountDue };
  if (i % 500 === 100 && !isInvalid(i - 1)) return { line, phone: mobile(i - 1), kind: 'duplicate', dnc: plannedRow(i - 1).dnc, amountDue };
  return { line, phone: mobile(i), kind: 'valid', dnc: i % 2000 === 7, amountDue };
}

export interface ListExpectation {
  unique: number;
  duplicates: number;
  dnc: string[];
  invalidLines: number[];
  missingAmount: number;
}

/** What an upload of the first `rows` rows should answer. */
export function expectationFor(rows: number): ListExpectation {
  const e: ListExpectation = { unique: 0, duplicates: 0, dnc: [], invalidLines: [], missingAmount: 0 };
  for (let i = 0; i < rows; i++) {
    const r = plannedRow(i);
    if (r.kind === 'invalid') e.invalidLines.push(r.line);
    else if (r.kind === 'duplicate') e.duplicates++;
    else {
      e.unique++;
      if (r.dnc) e.dnc.push(`+91${r.phone}`);
      if (r.amountDue === '') e.missingAmount++;
    }
  }
  return e;
}

/** The list as CSV, made while it is read: the header, then `rows` rows, 250 lines a chunk. */
export function contactListCsv(rows: number, extraLine?: { at: number; text: string }): Readable {
  return Readable.from(
    (function* () {
      yield 'phone,name,amount_due,timezone\n';
      for (let start = 0; start < rows; start += 250) {
        const lines: string[] = [];
        for (let i = start; i < Math.min(rows, start + 250); i++) {
          const r = plannedRow(i);
          lines.push(extraLine?.at === r.line ? extraLine.text : `${r.phone},Person ${i},${r.amountDue},${i % 3 === 0 ? 'Asia/Kolkata' : ''}`);
        }
        yield `${lines.join('\n')}\n`;
      }
    })(),
    { objectMode: false },
  );
}
