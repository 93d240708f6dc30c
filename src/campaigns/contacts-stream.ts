/**
 * A contact list streamed as CSV (POST /api/campaigns/{id}/contacts.csv): the body goes through
 * csv-parse's stream parser, WRITE_BATCH rows at a time through the same row reader as the JSON
 * body (parseContacts) and the same writer (contact-writer.ts). The records are pulled with
 * `for await`, so while a batch is written nothing more is read: the parser's buffer fills, the
 * request stream pauses and TCP holds the client back. Memory is one batch, whatever the length.
 *
 * The upload is one transaction: a malformed line or a body over the limit leaves the campaign as
 * it was, so the client can fix the file and send it again whole.
 */
import { Transform, type Readable } from 'node:stream';
import { parse, CsvError } from 'csv-parse';
import type { Database } from '../db/database';
import type { CampaignRow } from '../db/models/campaigns';
import { assertColumnNames } from './campaign-store';
import { assertPhoneColumn, ContactListError, CSV_OPTIONS, parseContacts } from './contacts';
import { UploadTally, WRITE_BATCH, writeParsed, type UploadSummary } from './contact-writer';

/** One record's bytes at most: a line without an end cannot fill the parser's buffer. */
const MAX_RECORD_BYTES = 64 * 1024;

export class UploadTooLarge extends Error {}

export interface StreamLimits {
  maxBytes: number;
  maxRows: number;
}

export interface StreamOptions {
  defaultCountry: string | null;
  expectedVariables: string[];
  limits: StreamLimits;
}

/** Passes the body on while counting its bytes; past the limit, fails the stream (413). */
function byteLimit(maxBytes: number): Transform {
  let bytes = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > maxBytes) done(new UploadTooLarge(`The CSV body is larger than the limit of ${maxBytes} bytes`));
      else done(null, chunk);
    },
  });
}

type CsvRecord = { record: Record<string, string>; info: { lines: number } };

export async function streamContacts(
  db: Database,
  campaign: Pick<CampaignRow, 'id' | 'owner_id' | 'timezone'>,
  body: Readable,
  options: StreamOptions,
): Promise<UploadSummary> {
  const { limits } = options;
  const parser = parse({ ...CSV_OPTIONS, max_record_size: MAX_RECORD_BYTES });
  const guard = byteLimit(limits.maxBytes);
  // pipe() does not carry errors forward: the parser, which the loop reads, is told of each. Its
  // own listener keeps an error raised before the loop reads (during BEGIN) from going unhandled;
  // the loop then finds the parser destroyed with it.
  body.once('error', (err) => parser.destroy(err));
  body.once('aborted', () => parser.destroy(new ContactListError('the upload was aborted before its end')));
  guard.once('error', (err) => parser.destroy(err));
  parser.on('error', () => undefined);
  try {
    return await db.sequelize.transaction(async (transaction) => {
      body.pipe(guard).pipe(parser);
      const tally = new UploadTally(options.expectedVariables);
      const now = new Date();
      let batch: Array<{ line: number; row: Record<string, unknown> }> = [];
      let rows = 0;
      const flush = async () => {
        await writeParsed(db, campaign, parseContacts(batch, options.defaultCountry), tally, now, transaction);
        batch = [];
      };
      for await (const { record, info } of parser as AsyncIterable<CsvRecord>) {
        if (rows === 0) {
          const columns = Object.keys(record);
          assertColumnNames(columns, 1);
          assertPhoneColumn(columns);
        }
        if (++rows > limits.maxRows) throw new UploadTooLarge(`The CSV has more than ${limits.maxRows} rows, the limit of one upload; split it`);
        // PostgreSQL text cannot hold NUL; the JSON body is refused for it too (422).
        if (Object.values(record).some((v) => v.includes('\u0000'))) throw new ContactListError(`csv: line ${info.lines} contains a NUL character`);
        batch.push({ line: info.lines, row: record });
        if (batch.length >= WRITE_BATCH) await flush();
      }
      if (batch.length) await flush();
      return tally.summary();
    });
  } catch (err) {
    if (err instanceof CsvError) throw new ContactListError(`csv: ${err.message}`);
    throw err;
  } finally {
    // Whatever is left of the body is read and dropped, so the answer reaches the client.
    body.unpipe(guard);
    body.resume();
  }
}
