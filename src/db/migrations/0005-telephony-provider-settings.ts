/**
 * Telephony settings per provider: the wide `telephony_settings` table had a column per vendor
 * field (`<provider>_<suffix>`, secrets as `<provider>_<suffix>_encrypted`), so every vendor or
 * field needed a migration. Each provider's fields move to a row of `telephony_provider_settings`
 * (plain values in `fields`, encrypted ones in `secrets`, copied as they are: no key needed), and
 * `telephony_settings` keeps the active provider and the public base URL.
 *
 * The move reads the columns there are, not a list of vendors: this migration must do the same
 * whatever vendors a build registers.
 */
import { DataTypes, QueryTypes, type QueryInterface } from 'sequelize';

const KEPT_COLUMNS = new Set(['id', 'provider', 'public_base_url', 'created_at', 'updated_at']);
const ENCRYPTED = '_encrypted';

/** `acme_auth_token_encrypted` → provider acme, suffix auth_token, secret. */
function splitColumn(column: string): { provider: string; suffix: string; secret: boolean } | null {
  const cut = column.indexOf('_');
  if (cut <= 0) return null;
  const rest = column.slice(cut + 1);
  const secret = rest.endsWith(ENCRYPTED);
  return { provider: column.slice(0, cut), suffix: secret ? rest.slice(0, -ENCRYPTED.length) : rest, secret };
}

async function settingsColumns(qi: QueryInterface): Promise<string[]> {
  const rows = await qi.sequelize.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = 'telephony_settings' ORDER BY ordinal_position`,
    { type: QueryTypes.SELECT },
  );
  return rows.map((r) => r.column_name);
}

export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable('telephony_provider_settings', {
    provider: { type: DataTypes.TEXT, primaryKey: true, allowNull: false },
    fields: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
    secrets: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
    created_at: { type: DataTypes.DATE, allowNull: false, defaultValue: qi.sequelize.fn('now') },
    updated_at: { type: DataTypes.DATE, allowNull: false, defaultValue: qi.sequelize.fn('now') },
  });
  const vendorColumns = (await settingsColumns(qi)).filter((c) => !KEPT_COLUMNS.has(c) && splitColumn(c));
  const [row] = await qi.sequelize.query<Record<string, unknown>>('SELECT * FROM telephony_settings WHERE id = 1', { type: QueryTypes.SELECT });
  const byProvider = new Map<string, { fields: Record<string, unknown>; secrets: Record<string, unknown> }>();
  for (const column of vendorColumns) {
    const value = row?.[column];
    if (value === null || value === undefined) continue;
    const { provider, suffix, secret } = splitColumn(column)!;
    const doc = byProvider.get(provider) ?? { fields: {}, secrets: {} };
    (secret ? doc.secrets : doc.fields)[suffix] = value;
    byProvider.set(provider, doc);
  }
  for (const [provider, doc] of byProvider) {
    await qi.sequelize.query('INSERT INTO telephony_provider_settings (provider, fields, secrets) VALUES ($1, $2::jsonb, $3::jsonb)', {
      bind: [provider, JSON.stringify(doc.fields), JSON.stringify(doc.secrets)],
    });
  }
  for (const column of vendorColumns) await qi.removeColumn('telephony_settings', column);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  const rows = await qi.sequelize.query<{ provider: string; fields: Record<string, unknown>; secrets: Record<string, unknown> }>(
    'SELECT provider, fields, secrets FROM telephony_provider_settings ORDER BY provider',
    { type: QueryTypes.SELECT },
  );
  const values: Record<string, unknown> = {};
  for (const { provider, fields, secrets } of rows) {
    for (const [suffix, value] of Object.entries(fields)) values[`${provider}_${suffix}`] = value;
    for (const [suffix, value] of Object.entries(secrets)) values[`${provider}_${suffix}${ENCRYPTED}`] = value;
  }
  const existing = new Set(await settingsColumns(qi));
  for (const [column, value] of Object.entries(values)) {
    if (!existing.has(column)) await qi.addColumn('telephony_settings', column, { type: typeof value === 'number' ? DataTypes.INTEGER : DataTypes.TEXT, allowNull: true });
  }
  if (Object.keys(values).length) {
    await qi.sequelize.query('INSERT INTO telephony_settings (id, created_at, updated_at) VALUES (1, now(), now()) ON CONFLICT (id) DO NOTHING');
    await qi.bulkUpdate('telephony_settings', values, { id: 1 });
  }
  await qi.dropTable('telephony_provider_settings');
}
