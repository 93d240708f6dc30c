/**
 * The telephony settings as the API shows them: every registered provider's fields flat, named
 * `<provider>_<suffix>`, with the spec's neutral aliases (`provider_a_…`) accepted on input. The
 * fields are the vendors' own declarations (their descriptors' `settings`), read at each use so a
 * vendor registered at start-up is served like the built-in ones.
 */
import { mask } from '../../security/crypto';
import type { TelephonyVendorDescriptor } from '../../providers/telephony/descriptor';
import { telephonyDescriptors } from '../../providers/telephony/registry';
import { fieldName, type SettingField } from '../../providers/telephony/settings';
import type { TelephonySettings } from '../../providers/telephony/settings-store';

export { DEFAULT_MAX_CONCURRENT } from '../../providers/telephony/settings';

export interface ProviderField {
  provider: string;
  suffix: string;
  field: SettingField;
  /** API name, e.g. acme_auth_token. */
  name: string;
}

const fieldsOf = (vendor: TelephonyVendorDescriptor): ProviderField[] =>
  Object.entries(vendor.settings).map(([suffix, field]) => ({ provider: vendor.name, suffix, field, name: fieldName(vendor.name, suffix) }));

export function allProviderFields(): ProviderField[] {
  return telephonyDescriptors().flatMap(fieldsOf);
}

/** Maps `provider_a_account_sid` to `<provider a's name>_account_sid`; other keys unchanged. */
export function canonicalFieldName(key: string): string {
  for (const vendor of telephonyDescriptors()) {
    if (vendor.alias && key.startsWith(`${vendor.alias}_`)) return fieldName(vendor.name, key.slice(vendor.alias.length + 1));
  }
  return key;
}

/**
 * API form: every field of every provider (`<provider>_<suffix>`), null when unset (the spec) —
 * also where a default applies, e.g. max_concurrent — and secrets masked.
 */
export function telephonySettingsJson(settings: TelephonySettings): Record<string, unknown> {
  const out: Record<string, unknown> = { provider: settings.provider, public_base_url: settings.public_base_url };
  for (const f of allProviderFields()) {
    const value = settings.defaulted.includes(f.name) ? null : (settings.vendors[f.provider]?.[f.suffix] ?? null);
    out[f.name] = f.field.kind === 'secret' ? mask(value as string | null) : value;
  }
  return out;
}

/** What GET /api/settings/telephony/providers says about each vendor: for forms and tooling. */
export function providersJson() {
  return telephonyDescriptors().map((vendor) => ({
    name: vendor.name,
    alias: vendor.alias,
    label: vendor.label,
    docs: vendor.docs,
    capabilities: vendor.capabilities,
    fields: fieldsOf(vendor).map((f) => ({
      name: f.name,
      suffix: f.suffix,
      kind: f.field.kind,
      secret: f.field.kind === 'secret',
      label: f.field.label,
      help: f.field.help,
      default: f.field.default ?? null,
    })),
  }));
}
