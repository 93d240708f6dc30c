/**
 * Reads and writes the single telephony settings row (id = 1). Secrets are encrypted at rest;
 * loadTelephonySettings is the internal reader (decrypted, defaults applied) for telephony code.
 */
import type { Config } from '../../config';
import type { Database } from '../../db/database';
import { plain } from '../../db/database';
import type { TelephonySettingsRow } from '../../db/models';
import { mask, type SecretBox } from '../../security/crypto';
import { TELEPHONY_PROVIDERS, type TelephonyProvider } from '../../shared/catalog';
import { ALL_PROVIDER_FIELDS, DEFAULT_MAX_CONCURRENT, PROVIDER_FIELDS, type FieldKind, type ProviderField } from './provider-fields';

export const SETTINGS_ROW_ID = 1;

type FieldValue<K extends FieldKind> = K extends 'int' ? number : string | null;
export type ProviderSettings<P extends TelephonyProvider> = {
  -readonly [S in keyof (typeof PROVIDER_FIELDS)[P]]: FieldValue<(typeof PROVIDER_FIELDS)[P][S] & FieldKind>;
};

export interface TelephonySettings {
  /** The active provider; null until configured. */
  provider: TelephonyProvider | null;
  /** As stored; use effectivePublicBaseUrl() for the URL to hand to providers. */
  public_base_url: string | null;
  /** Decrypted credentials per provider; max_concurrent has its default applied. */
  twilio: ProviderSettings<'twilio'>;
  exotel: ProviderSettings<'exotel'>;
  plivo: ProviderSettings<'plivo'>;
  /** API names of the fields not stored, whose default applies (the API shows them as null). */
  defaulted?: string[];
}

const column = (f: ProviderField) => (f.kind === 'secret' ? `${f.name}_encrypted` : f.name) as keyof TelephonySettingsRow;

export async function loadTelephonySettings(db: Database, box: SecretBox): Promise<TelephonySettings> {
  const row = plain(await db.models.TelephonySettings.findByPk(SETTINGS_ROW_ID));
  const result = {
    provider: (row?.provider as TelephonyProvider | null) ?? null,
    public_base_url: row?.public_base_url ?? null,
    defaulted: [],
  } as unknown as TelephonySettings;
  for (const provider of TELEPHONY_PROVIDERS) (result as unknown as Record<string, Record<string, unknown>>)[provider] = {};
  for (const f of ALL_PROVIDER_FIELDS) {
    const stored = (row?.[column(f)] ?? null) as string | number | null;
    let value: unknown = stored;
    if (f.kind === 'secret') value = box.decryptNullable(stored as string | null);
    if (f.kind === 'int' && stored === null) {
      value = DEFAULT_MAX_CONCURRENT;
      result.defaulted!.push(f.name);
    }
    (result[f.provider] as Record<string, unknown>)[f.suffix] = value;
  }
  return result;
}

/** The base URL for webhook and media-stream URLs: the stored setting, else PUBLIC_BASE_URL. */
export function effectivePublicBaseUrl(settings: Pick<TelephonySettings, 'public_base_url'>, config: Pick<Config, 'PUBLIC_BASE_URL'>): string {
  return (settings.public_base_url ?? config.PUBLIC_BASE_URL).replace(/\/+$/, '');
}

/**
 * API form: every field of every provider (`<provider>_<suffix>`), null when unset (the spec) —
 * also where a default applies, e.g. max_concurrent — and secrets masked.
 */
export function telephonySettingsJson(settings: TelephonySettings): Record<string, unknown> {
  const out: Record<string, unknown> = { provider: settings.provider, public_base_url: settings.public_base_url };
  for (const f of ALL_PROVIDER_FIELDS) {
    const value = settings.defaulted?.includes(f.name) ? null : ((settings[f.provider] as Record<string, unknown>)[f.suffix] ?? null);
    out[f.name] = f.kind === 'secret' ? mask(value as string | null) : value;
  }
  return out;
}

export interface SettingsUpdate {
  provider: TelephonyProvider;
  public_base_url: string;
  /** API field name (`twilio_auth_token`) to new value; null clears. Absent fields are kept. */
  fields: Record<string, string | number | null>;
}

export async function saveTelephonySettings(db: Database, box: SecretBox, update: SettingsUpdate): Promise<void> {
  const values: Record<string, unknown> = { id: SETTINGS_ROW_ID, provider: update.provider, public_base_url: update.public_base_url };
  for (const f of ALL_PROVIDER_FIELDS) {
    if (!(f.name in update.fields)) continue;
    const value = update.fields[f.name] ?? null;
    values[column(f)] = f.kind === 'secret' ? box.encryptNullable(value as string | null) : value;
  }
  // INSERT ... ON CONFLICT (id) DO UPDATE of the given columns only: a partial update, race-free.
  await db.models.TelephonySettings.upsert(values as Partial<TelephonySettingsRow>);
}
