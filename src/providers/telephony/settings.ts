/**
 * A telephony vendor's stored settings, as its descriptor declares them: one SettingField per
 * suffix (`account_sid`, `auth_token`, …). The API names a field `<provider>_<suffix>`, stores
 * one row per provider (secrets encrypted), and builds its validation, its OpenAPI description
 * and the dashboard's form from these declarations; nothing outside the vendor's folder lists them.
 */
import { z } from 'zod';

/** text: plain string; secret: stored encrypted, returned masked; phone: E.164; url: http(s) URL; int: a count. */
export type FieldKind = 'text' | 'secret' | 'phone' | 'url' | 'int';

export interface SettingField<K extends FieldKind = FieldKind> {
  readonly kind: K;
  /** Shown as the dashboard's label: "Auth token". */
  readonly label: string;
  /** One line for the dashboard and the OpenAPI document (where to find the value). */
  readonly help: string;
  /** Validates a value sent to PUT /api/settings/telephony (null, which clears, is checked apart). */
  readonly schema: z.ZodType;
  /** Applies while the field is unset; the API then shows null. */
  readonly default?: K extends 'int' ? number : string;
}

export type SettingsSchema = Readonly<Record<string, SettingField>>;

type ValueOf<F extends SettingField> = F extends { default: number | string } ? NonNullable<F['default']> : F extends SettingField<'int'> ? number | null : string | null;

/** A vendor's settings as telephony code reads them: decrypted, defaults applied. */
export type SettingsValues<S extends SettingsSchema = SettingsSchema> = { -readonly [K in keyof S]: ValueOf<S[K]> };

/** Every vendor's values, unknown to the type system: a vendor reads its own through its schema. */
export type VendorSettings = Record<string, string | number | null>;

export const E164_PATTERN = /^\+[1-9]\d{6,14}$/;
export const PhoneNumberSchema = z.string().regex(E164_PATTERN, 'must be an E.164 number such as +14155550123');

/**
 * Concurrent calls per provider when max_concurrent is not set. Trial and entry-level accounts of
 * the supported providers allow at least this many simultaneous calls; raise it to the account's limit.
 */
export const DEFAULT_MAX_CONCURRENT = 10;

const nonEmpty = z.string().trim().min(1, 'cannot be empty').max(512);

/** The field builders a descriptor declares its settings with. */
export const setting = {
  text: (label: string, help: string): SettingField<'text'> => ({ kind: 'text', label, help, schema: nonEmpty }),
  secret: (label: string, help: string): SettingField<'secret'> => ({ kind: 'secret', label, help, schema: nonEmpty }),
  phone: (label: string, help: string): SettingField<'phone'> => ({ kind: 'phone', label, help, schema: PhoneNumberSchema }),
  url: (label: string, help: string): SettingField<'url'> => ({
    kind: 'url',
    label,
    help,
    schema: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
  }),
  /** `max_concurrent`: every vendor has it; the platform refuses calls over it. */
  maxConcurrent: (): SettingField<'int'> & { default: number } => ({
    kind: 'int',
    label: 'Max concurrent calls',
    help: `Calls at once through this provider (the account's limit); unset = ${DEFAULT_MAX_CONCURRENT}`,
    schema: z.number().int().min(1).max(100_000),
    default: DEFAULT_MAX_CONCURRENT,
  }),
};

/** The API name of a field: `twilio` + `auth_token` → `twilio_auth_token`. */
export const fieldName = (provider: string, suffix: string) => `${provider}_${suffix}`;

/** The fields named in "X is not configured" errors that have no value in `values`. */
export function missingFields(provider: string, values: VendorSettings, suffixes: readonly string[]): string[] {
  return suffixes.filter((s) => values[s] === null || values[s] === undefined || values[s] === '').map((s) => fieldName(provider, s));
}
