import { z } from 'zod';
import type { ApiContext } from '../context';
import { describeIssues, HttpError, unprocessable } from '../errors';
import { route } from '../route';
import { mask } from '../../security/crypto';
import { telephonyDescriptors } from '../../providers/telephony/registry';
import { DEFAULT_MAX_CONCURRENT } from '../../providers/telephony/settings';
import { loadTelephonySettings, saveTelephonySettings, type TelephonySettings } from '../../providers/telephony/settings-store';
import { aliasPrefixesText, providerFieldSchemas, telephonyProvidersSchema, telephonySettingsPutSchema, telephonySettingsSchema } from '../schemas/settings';
import { allProviderFields, canonicalFieldName, providersJson, telephonySettingsJson } from '../telephony/provider-fields';

/**
 * Resolves alias prefixes and checks every provider field of the PUT body: it must exist, belong
 * to the active provider and be valid. Errors name the field as the client spelled it. Returns
 * the active provider's changes by suffix.
 */
function providerFieldChanges(body: Record<string, unknown>, provider: string, current: TelephonySettings) {
  const fieldsByName = new Map(allProviderFields().map((f) => [f.name, f]));
  const sentAs = new Map<string, string>();
  const values: Record<string, unknown> = {};
  const unknown: string[] = [];
  const foreign: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (key === 'provider' || key === 'public_base_url') continue;
    const name = canonicalFieldName(key);
    const field = fieldsByName.get(name);
    if (!field) unknown.push(key);
    else if (field.provider !== provider) foreign.push(key);
    else if (sentAs.has(name)) throw unprocessable(key, `given twice (also as ${sentAs.get(name)})`);
    else {
      sentAs.set(name, key);
      values[name] = value;
    }
  }
  if (unknown.length) throw unprocessable(unknown.join(', '), 'unknown field');
  if (foreign.length) throw unprocessable(foreign.join(', '), `only fields of the active provider (${provider}) can be updated`);

  const parsed = z.object(providerFieldSchemas()).safeParse(values);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ ...i, path: [sentAs.get(String(i.path[0])) ?? String(i.path[0]), ...i.path.slice(1)] }));
    throw new HttpError(422, describeIssues(issues));
  }
  const fields: Record<string, string | number | null> = {};
  for (const [name, value] of Object.entries(parsed.data as Record<string, string | number | null | undefined>)) {
    if (value === undefined) continue;
    const f = fieldsByName.get(name)!;
    const stored = current.vendors[provider]?.[f.suffix] ?? null;
    // A form that loaded the masked secret and sends it back unchanged must not overwrite the secret.
    if (f.field.kind === 'secret' && value !== null && stored !== null && value === mask(String(stored))) continue;
    fields[f.suffix] = value;
  }
  return fields;
}

export function settingsRoutes(ctx: ApiContext) {
  const { db, box } = ctx;
  const settingsSchema = telephonySettingsSchema();
  return [
    route({
      method: 'get',
      path: '/api/settings/telephony',
      operationId: 'getTelephonySettings',
      tag: 'Settings',
      summary: 'Telephony provider settings',
      description: `Every field of every provider (\`<provider>_<suffix>\`), null when unset; secrets masked. An unset (null) \`max_concurrent\` means the default of ${DEFAULT_MAX_CONCURRENT} concurrent calls.`,
      responses: { 200: { description: 'The settings', schema: settingsSchema } },
      async handler() {
        return { status: 200, body: telephonySettingsJson(await loadTelephonySettings(db, box)) };
      },
    }),
    route({
      method: 'put',
      path: '/api/settings/telephony',
      operationId: 'updateTelephonySettings',
      tag: 'Settings',
      summary: 'Update telephony provider settings (partial)',
      description: `\`provider\` and \`public_base_url\` are required; other fields are optional and only those of the active provider are accepted (422 naming the others). Fields not sent keep their value; null clears one. Aliases: ${telephonyDescriptors()
        .flatMap((v) => (v.alias ? [`\`${v.alias}\` for \`${v.name}\``] : []))
        .join(', ')}, as the provider value and as field prefixes (${aliasPrefixesText()}).`,
      body: telephonySettingsPutSchema(),
      responses: { 200: { description: 'The settings after the update', schema: settingsSchema } },
      async handler({ body }) {
        const current = await loadTelephonySettings(db, box);
        const fields = providerFieldChanges(body as Record<string, unknown>, body.provider, current);
        await saveTelephonySettings(db, box, { provider: body.provider, public_base_url: body.public_base_url, fields });
        return { status: 200, body: telephonySettingsJson(await loadTelephonySettings(db, box)) };
      },
    }),
    route({
      method: 'get',
      path: '/api/settings/telephony/providers',
      operationId: 'listTelephonyProviders',
      tag: 'Settings',
      summary: 'The telephony providers of this installation',
      description:
        'Each provider with its settings fields (`<provider>_<suffix>`, kind, whether secret, label, help text, default), its capabilities (transfer, machine detection, sending DTMF, audio formats) and what to set up at the vendor. The dashboard builds its telephony form from it.',
      responses: { 200: { description: 'The providers, in registration order', schema: telephonyProvidersSchema() } },
      async handler() {
        return { status: 200, body: providersJson() };
      },
    }),
  ];
}
