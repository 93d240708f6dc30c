/**
 * Migration 0005 on a database of the previous schema: telephony settings stored in the wide
 * table (one column per vendor field, secrets SecretBox-encrypted in `<field>_encrypted`) as the
 * code before it wrote them, for all three vendors. After the migration every credential decrypts
 * to what was stored, the API answers GET /api/settings/telephony as before (flat fields, secrets
 * masked, unset ones null), and a webhook signed with the migrated secret is accepted.
 */
import crypto from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { ensureAdmin } from '../../src/api/auth/accounts';
import type { ApiContext } from '../../src/api/context';
import { startApi, type RunningApi } from '../../src/api/server';
import { connectDatabase, type Database } from '../../src/db/database';
import { migrate } from '../../src/db/migrate';
import * as m0005 from '../../src/db/migrations/0005-telephony-provider-settings';
import { loadTelephonySettings } from '../../src/providers/telephony/settings-store';
import { computeTwilioSignature } from '../../src/providers/telephony/twilio/signature';
import { SecretBox } from '../../src/security/crypto';
import { createLogger } from '../../src/shared/logger';
import { connectTemporal } from '../../src/temporal/client';
import { ADMIN_EMAIL, ADMIN_PASSWORD, testConfig } from '../support/harness';
import { adminQuery, withDatabase } from '../support/postgres';

const STORED = {
  twilio: { account_sid: 'AC0123456789abcdef0123456789abcdef', auth_token: 'tw-auth-token-7788', phone_number: '+14155550123', max_concurrent: 5 },
  exotel: { account_sid: 'acme1', api_key: 'ex-key-123', api_token: 'ex-api-token-4455', phone_number: '+919876543210', api_base: 'https://api.in.exotel.com', max_concurrent: null },
  plivo: { auth_id: 'MA0123456789', auth_token: 'pl-auth-token-9900', phone_number: '+14155550177', max_concurrent: 7 },
};
const SECRETS = { twilio: ['auth_token'], exotel: ['api_token'], plivo: ['auth_token'] } as const;

let db: Database;
let api: RunningApi;
let dbName: string;
const config = testConfig({ PUBLIC_BASE_URL: 'https://config.example.com' });
const box = new SecretBox(config.ENCRYPTION_KEY!);

/** A new database at the schema this change starts from (0004). */
async function databaseAt0004(name: string): Promise<Database> {
  await adminQuery(process.env.VAP_TEST_PG_URL!, `CREATE DATABASE "${name}"`);
  const created = connectDatabase(withDatabase(process.env.VAP_TEST_PG_URL!, name), { poolMax: 3 });
  expect(await migrate(created.sequelize, { to: '0004-call-channel' })).toEqual(['0001-initial', '0002-security', '0004-call-channel']);
  return created;
}

/** The settings row as the wide-table code wrote it: one column per field, secrets encrypted. */
async function writeWideSettings(target: Database): Promise<void> {
  const columns: Record<string, unknown> = { id: 1, provider: 'exotel', public_base_url: 'https://voice.example.com' };
  for (const [provider, fields] of Object.entries(STORED)) {
    for (const [suffix, value] of Object.entries(fields)) {
      const secret = (SECRETS[provider as keyof typeof SECRETS] as readonly string[]).includes(suffix);
      columns[secret ? `${provider}_${suffix}_encrypted` : `${provider}_${suffix}`] = secret ? box.encrypt(value as string) : value;
    }
  }
  const names = Object.keys(columns);
  await target.sequelize.query(`INSERT INTO telephony_settings (${names.join(', ')}, created_at, updated_at) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')}, now(), now())`, {
    bind: Object.values(columns),
  });
}

beforeAll(async () => {
  dbName = `vap_migration_${crypto.randomBytes(4).toString('hex')}`;
  db = await databaseAt0004(dbName);
  await writeWideSettings(db);
}, 60_000);

afterAll(async () => {
  await api?.stop();
  await db?.close();
  await adminQuery(process.env.VAP_TEST_PG_URL!, `DROP DATABASE IF EXISTS "${dbName}"`);
});

describe('migration 0005: telephony settings per provider', () => {
  it('moves every field of every provider to its own row, secrets still encrypted, and drops the wide columns', async () => {
    expect(await migrate(db.sequelize, { to: '0005-telephony-provider-settings' })).toEqual(['0005-telephony-provider-settings']);

    const columns = await db.sequelize.query<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'telephony_settings' ORDER BY column_name",
      { type: QueryTypes.SELECT },
    );
    expect(columns.map((c) => c.column_name)).toEqual(['created_at', 'id', 'provider', 'public_base_url', 'updated_at']);

    const rows = await db.sequelize.query<{ provider: string; fields: Record<string, unknown>; secrets: Record<string, string> }>(
      'SELECT provider, fields, secrets FROM telephony_provider_settings ORDER BY provider',
      { type: QueryTypes.SELECT },
    );
    expect(rows.map((r) => r.provider)).toEqual(['exotel', 'plivo', 'twilio']);
    for (const row of rows) {
      const stored = STORED[row.provider as keyof typeof STORED];
      const secretNames: readonly string[] = SECRETS[row.provider as keyof typeof SECRETS];
      for (const [suffix, value] of Object.entries(stored)) {
        if (secretNames.includes(suffix)) {
          expect(row.secrets[suffix]).toMatch(/^v1:/);
          expect(box.decrypt(row.secrets[suffix]!)).toBe(value);
        } else if (value !== null) {
          expect(row.fields[suffix]).toBe(value);
        }
      }
      expect(JSON.stringify(row)).not.toMatch(/token-\d{4}/);
    }

    const loaded = await loadTelephonySettings(db, box);
    expect(loaded).toMatchObject({ provider: 'exotel', public_base_url: 'https://voice.example.com' });
    expect(loaded.vendors.twilio).toEqual(STORED.twilio);
    expect(loaded.vendors.plivo).toEqual(STORED.plivo);
    expect(loaded.vendors.exotel).toEqual({ ...STORED.exotel, max_concurrent: 10 });
  });

  it('the API answers as before, and webhooks verify with the migrated secret', async () => {
    await migrate(db.sequelize); // the rest of the migrations, as a start-up does
    await ensureAdmin(db, ADMIN_EMAIL, ADMIN_PASSWORD);
    const temporal = await connectTemporal(process.env.VAP_TEST_TEMPORAL_ADDRESS!, config.TEMPORAL_NAMESPACE);
    const ctx: ApiContext = { config, db, jwtSecret: config.JWT_SECRET!, box, temporal, notifier: { sendPasswordReset: async () => undefined }, log: createLogger('api') };
    api = await startApi(ctx, 0, '127.0.0.1');
    const login = await fetch(`${api.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }) });
    const token = ((await login.json()) as { access_token: string }).access_token;

    const res = await fetch(`${api.url}/api/settings/telephony`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      provider: 'exotel',
      public_base_url: 'https://voice.example.com',
      twilio_account_sid: STORED.twilio.account_sid,
      twilio_auth_token: '****7788',
      twilio_phone_number: STORED.twilio.phone_number,
      twilio_max_concurrent: 5,
      exotel_account_sid: 'acme1',
      exotel_api_key: 'ex-key-123',
      exotel_api_token: '****4455',
      exotel_phone_number: STORED.exotel.phone_number,
      exotel_api_base: 'https://api.in.exotel.com',
      exotel_max_concurrent: null,
      plivo_auth_id: 'MA0123456789',
      plivo_auth_token: '****9900',
      plivo_phone_number: STORED.plivo.phone_number,
      plivo_max_concurrent: 7,
    });

    // A status callback signed with the migrated auth token passes the signature check (204:
    // accepted, unknown call ignored); one signed with another token does not.
    const url = 'https://voice.example.com/telephony/twilio/status';
    const form = { CallSid: `CA${'0'.repeat(32)}`, CallStatus: 'completed' };
    const post = (signature: string) =>
      fetch(`${api.url}/telephony/twilio/status`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature }, body: new URLSearchParams(form).toString() });
    expect((await post(computeTwilioSignature(STORED.twilio.auth_token, url, form))).status).toBe(204);
    expect((await post(computeTwilioSignature('some-other-token', url, form))).status).toBe(403);
    await temporal.connection.close();
  }, 60_000);

  it('down puts every value back in its wide column', async () => {
    const name = `${dbName}_down`;
    const other = await databaseAt0004(name);
    try {
      await writeWideSettings(other);
      const before = await other.sequelize.query<Record<string, unknown>>('SELECT * FROM telephony_settings', { type: QueryTypes.SELECT });
      await migrate(other.sequelize, { to: '0005-telephony-provider-settings' });
      await m0005.down({ context: other.sequelize.getQueryInterface() });
      const [after] = await other.sequelize.query<Record<string, unknown>>('SELECT * FROM telephony_settings', { type: QueryTypes.SELECT });
      for (const [column, value] of Object.entries(before[0]!)) {
        if (column === 'created_at' || column === 'updated_at' || value === null) continue;
        expect([column, after![column]]).toEqual([column, value]);
      }
      expect(box.decrypt(after!.plivo_auth_token_encrypted as string)).toBe(STORED.plivo.auth_token);
    } finally {
      await other.close();
      await adminQuery(process.env.VAP_TEST_PG_URL!, `DROP DATABASE IF EXISTS "${name}"`);
    }
  });
});
