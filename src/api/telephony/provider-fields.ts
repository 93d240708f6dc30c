/**
 * The credential fields of each telephony provider, as named in the settings API
 * (`<provider>_<suffix>`), and the spec's neutral provider names accepted as aliases.
 */
import { TELEPHONY_ALIASES, TELEPHONY_PROVIDERS, type TelephonyProvider } from '../../shared/catalog';

/** text: plain string; secret: stored encrypted, returned masked; phone: E.164; url: http(s) URL. */
export type FieldKind = 'text' | 'secret' | 'phone' | 'url' | 'int';

export const PROVIDER_FIELDS = {
  twilio: { account_sid: 'text', auth_token: 'secret', phone_number: 'phone', max_concurrent: 'int' },
  exotel: { account_sid: 'text', api_key: 'text', api_token: 'secret', phone_number: 'phone', api_base: 'url', max_concurrent: 'int' },
  plivo: { auth_id: 'text', auth_token: 'secret', phone_number: 'phone', max_concurrent: 'int' },
} as const satisfies Record<TelephonyProvider, Record<string, FieldKind>>;

/**
 * Concurrent calls per provider when max_concurrent is not set. Trial and entry-level accounts of
 * the supported providers allow at least this many simultaneous calls; raise it to the account's limit.
 */
export const DEFAULT_MAX_CONCURRENT = 10;

export interface ProviderField {
  provider: TelephonyProvider;
  suffix: string;
  kind: FieldKind;
  /** API name, e.g. twilio_auth_token. */
  name: string;
}

export const ALL_PROVIDER_FIELDS: ProviderField[] = TELEPHONY_PROVIDERS.flatMap((provider) =>
  Object.entries(PROVIDER_FIELDS[provider]).map(([suffix, kind]) => ({ provider, suffix, kind, name: `${provider}_${suffix}` })),
);

/** The real provider name for a real name or an alias; undefined for anything else. */
export function resolveProvider(value: unknown): TelephonyProvider | undefined {
  if (typeof value !== 'string') return undefined;
  if ((TELEPHONY_PROVIDERS as readonly string[]).includes(value)) return value as TelephonyProvider;
  return TELEPHONY_ALIASES[value];
}

export const PROVIDER_CHOICES = `one of ${TELEPHONY_PROVIDERS.join(', ')} (or ${Object.keys(TELEPHONY_ALIASES).join(', ')})`;

/** Maps `provider_a_account_sid` to `twilio_account_sid`; other keys unchanged. */
export function canonicalFieldName(key: string): string {
  for (const [alias, provider] of Object.entries(TELEPHONY_ALIASES)) {
    if (key.startsWith(`${alias}_`)) return `${provider}_${key.slice(alias.length + 1)}`;
  }
  return key;
}
