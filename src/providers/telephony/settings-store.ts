/**
 * Reads and writes the telephony settings: one row (id = 1) with the active provider and the
 * public base URL, and one row per provider with that vendor's fields (telephony_provider_settings;
 * secrets encrypted at rest). Which fields exist, which are secret and their defaults come from
 * each vendor's descriptor (registry.ts); loadTelephonySettings is the reader for telephony code
 * (decrypted, defaults applied).
 */
import { QueryTypes } from 'sequelize';
import type { Database } from '../../db/database';
import { plain } from '../../db/database';
import type { SecretBox } from '../../security/crypto';
import { telephonyDescriptors } from './registry';
import { fieldName, type VendorSettings } from './settings';

export const SETTINGS_ROW_ID = 1;

export interface TelephonySettings {
  /** The active provider; null until configured. */
  provider: string | null;
  /** As stored; use effectivePublicBaseUrl() for the URL to hand to providers. */
  public_base_url: string | null;
  /** Every registered provider's settings by suffix: decrypted, unset ones null, defaults applied. */
  vendors: Record<string, VendorSettings>;
  /** API names of the fields not stored, whose default applies (the API shows them as null). */
  defaulted: string[];
}

export async function loadTelephonySettings(db: Database, box: SecretBox): Promise<TelephonySettings> {
  const [row, stored] = await Promise.all([
    db.models.TelephonySettings.findByPk(SETTINGS_ROW_ID),
    db.models.TelephonyProviderSettings.findAll(),
  ]);
  const general = plain(row);
  const rows = new Map(stored.map((r) => [r.get('provider'), plain(r)]));
  const result: TelephonySettings = { provider: general?.provider ?? null, public_base_url: general?.public_base_url ?? null, vendors: {}, defaulted: [] };
  for (const vendor of telephonyDescriptors()) {
    const doc = rows.get(vendor.name);
    const values: VendorSettings = {};
    for (const [suffix, field] of Object.entries(vendor.settings)) {
      let value = field.kind === 'secret' ? box.decryptNullable(doc?.secrets[suffix] ?? null) : (doc?.fields[suffix] ?? null);
      if (value === null && field.default !== undefined) {
        value = field.default;
        result.defaulted.push(fieldName(vendor.name, suffix));
      }
      values[suffix] = value;
    }
    result.vendors[vendor.name] = values;
  }
  return result;
}

/** The base URL for webhook and media-stream URLs: the stored setting, else PUBLIC_BASE_URL. */
export function effectivePublicBaseUrl(settings: Pick<TelephonySettings, 'public_base_url'>, config: { PUBLIC_BASE_URL: string }): string {
  return (settings.public_base_url ?? config.PUBLIC_BASE_URL).replace(/\/+$/, '');
}

export interface SettingsUpdate {
  provider: string;
  public_base_url: string;
  /** The active provider's fields by suffix (`auth_token`) to new values; null clears. Absent fields are kept. */
  fields: Record<string, string | number | null>;
}

export async function saveTelephonySettings(db: Database, box: SecretBox, update: SettingsUpdate): Promise<void> {
  const vendor = telephonyDescriptors().find((v) => v.name === update.provider);
  if (!vendor) throw new Error(`unknown telephony provider ${update.provider}`);
  const fields: Record<string, unknown> = {};
  const secrets: Record<string, unknown> = {};
  for (const [suffix, value] of Object.entries(update.fields)) {
    const field = vendor.settings[suffix];
    if (!field) throw new Error(`${update.provider} has no setting ${suffix}`);
    if (field.kind === 'secret') secrets[suffix] = box.encryptNullable(value as string | null);
    else fields[suffix] = value;
  }
  await db.sequelize.transaction(async (transaction) => {
    // INSERT ... ON CONFLICT DO UPDATE of the given values only: partial updates, race-free. A
    // null clears a field (jsonb_strip_nulls drops it).
    await db.models.TelephonySettings.upsert({ id: SETTINGS_ROW_ID, provider: update.provider, public_base_url: update.public_base_url }, { transaction });
    await db.sequelize.query(
      `INSERT INTO telephony_provider_settings (provider, fields, secrets, created_at, updated_at)
       VALUES ($1, jsonb_strip_nulls($2::jsonb), jsonb_strip_nulls($3::jsonb), now(), now())
       ON CONFLICT (provider) DO UPDATE SET
         fields = jsonb_strip_nulls(telephony_provider_settings.fields || $2::jsonb),
         secrets = jsonb_strip_nulls(telephony_provider_settings.secrets || $3::jsonb),
         updated_at = now()`,
      { bind: [update.provider, JSON.stringify(fields), JSON.stringify(secrets)], type: QueryTypes.INSERT, transaction },
    );
  });
}
