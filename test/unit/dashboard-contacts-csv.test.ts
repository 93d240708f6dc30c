/**
 * The dashboard's contact-list mapping (web/src/lib/contacts-csv.ts) against the API's own reader
 * (src/campaigns/contacts.ts): the text it sends keeps the user's line numbers, and the API takes
 * exactly the columns chosen in the browser as the phone and the time zone.
 */
import { csvRows, parseContacts } from '../../src/campaigns/contacts';
import { uploadRows } from '../../src/campaigns/campaign-store';
import { guessMapping, mappedCsv, mappedHeader, parseCsv, previewRows } from '../../web/src/lib/contacts-csv';

const FILE = [
  '\uFEFFName,Mobile Number,Zone,Amount Due,tz,phone',
  'Asha,+919876543210,Asia/Kolkata,1200,x,+14155550000',
  '',
  '"Bob, Jr.",+14155550123,America/New_York,"80",,',
  '"Multi',
  'line",not-a-number,UTC,5,,',
  'Cy,+14155550124,Mars/Olympus,7,,',
].join('\n');

describe('the contact list as the dashboard reads and sends it', () => {
  it('parses quoted fields and line breaks with each record at its own line, as the API does', () => {
    const file = parseCsv(FILE);
    expect(file.header).toEqual(['name', 'mobile number', 'zone', 'amount due', 'tz', 'phone']);
    expect(file.records.map((r) => r.line)).toEqual([2, 4, 5, 7]);
    expect(file.records[1]!.fields).toEqual(['Bob, Jr.', '+14155550123', 'America/New_York', '80', '', '']);
    expect(file.records[2]!.fields[0]).toBe('Multi\nline');
    expect(parseCsv('phone\r\n+1\r\n\r\n+2\r\n').records).toEqual([{ line: 2, fields: ['+1'] }, { line: 4, fields: ['+2'] }]);
    // The API numbers records by the line they end on; single-line records agree.
    expect(csvRows(FILE).map((r) => r.line)).toEqual([2, 4, 6, 7]);
  });

  it('sends the chosen columns as phone_number and timezone, the rest as parameter names, and keeps line numbers', () => {
    const file = parseCsv(FILE);
    // The names alone would make the API read `phone` and `tz`; the user picks the other two.
    expect(guessMapping(file.header)).toEqual({ phone: 5, timezone: 4 });
    const mapping = { phone: 1, timezone: 2 };
    expect(mappedHeader(file.header, mapping)).toEqual(['name', 'phone_number', 'timezone', 'amount_due', 'tz_column', 'phone_column']);
    const parsed = parseContacts(uploadRows({ contacts_csv: mappedCsv(file, mapping) }));
    expect(parsed.contacts.map((c) => [c.line, c.phone, c.timezone])).toEqual([
      [2, '+919876543210', 'Asia/Kolkata'],
      [4, '+14155550123', 'America/New_York'],
    ]);
    expect(parsed.contacts[0]!.customParameters).toEqual({ name: 'Asha', amount_due: '1200', tz_column: 'x', phone_column: '+14155550000' });
    expect(parsed.invalid).toEqual([
      { line: 6, phone: 'not-a-number', error: 'not a valid phone number (a national number needs default_country)' },
      { line: 7, phone: '+14155550124', error: 'unknown time zone Mars/Olympus' },
    ]);
  });

  it('without a time-zone column, no column is read as one', () => {
    const file = parseCsv('phone,tz,timezone\n+14155550123,Asia/Kolkata,Europe/Paris\n');
    const parsed = parseContacts(uploadRows({ contacts_csv: mappedCsv(file, { phone: 0, timezone: null }) }));
    expect(parsed.contacts[0]).toMatchObject({ timezone: null, customParameters: { tz_column: 'Asia/Kolkata', timezone_column: 'Europe/Paris' } });
  });

  it('previews rows with the browser-side hints', () => {
    const file = parseCsv('phone,name\n+14155550123,Ann\n,Nobody\n+14155550124\n');
    expect(previewRows(file, { phone: 0, timezone: null }, 10)).toEqual([
      { line: 2, phone: '+14155550123', timezone: '', parameters: [['name', 'Ann']], problem: null },
      { line: 3, phone: '', timezone: '', parameters: [['name', 'Nobody']], problem: 'no phone number' },
      { line: 4, phone: '+14155550124', timezone: '', parameters: [], problem: '1 fields, the header has 2' },
    ]);
  });
});
