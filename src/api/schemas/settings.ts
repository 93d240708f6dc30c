/** Request and response shapes of telephony settings and telephony endpoints. */
import { z } from 'zod';
import { providerChoicesText, resolveProvider, telephonyDescriptors } from '../../providers/telephony/registry';
import { DEFAULT_MAX_CONCURRENT, E164_PATTERN, PhoneNumberSchema, type FieldKind } from '../../providers/telephony/settings';
import { allProviderFields } from '../telephony/provider-fields';
import { TelephonyProviderName, telephonyProviderInputMeta, Timestamp } from './common';

export { E164_PATTERN, PhoneNumberSchema };

// Providers must reach this URL from the internet, so it has to be HTTPS; plain HTTP is allowed
// for loopback hosts only, where a local setup or a tunnel terminates TLS.
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
export const PublicBaseUrlSchema = z
  .url({ protocol: /^https?$/, error: 'must be an https:// URL' })
  // zod runs this refinement even after the URL check failed: a value that does not parse is left to that check.
  .refine((value) => {
    if (!URL.canParse(value)) return true;
    const url = new URL(value);
    return url.protocol === 'https:' || LOOPBACK_HOSTS.has(url.hostname);
  }, 'must be an https:// URL (http:// only for localhost)')
  .transform((value) => value.replace(/\/+$/, ''))
  .describe('publicly reachable HTTPS URL of this service; providers call back to it');

/** Provider given by its name or the spec's alias; yields the real name. Built when routes are. */
export const providerSchema = () =>
  z
    .string()
    .refine((v) => resolveProvider(v) !== undefined, { error: () => `must be ${providerChoicesText()}` })
    .transform((v) => resolveProvider(v)!)
    .meta(telephonyProviderInputMeta);

const FIELD_DOC: Record<FieldKind, string> = {
  text: 'plain text',
  secret: 'secret: stored encrypted, returned masked (****last4); sending the masked value back keeps the stored secret',
  phone: 'E.164',
  url: 'URL',
  int: `null = the default, ${DEFAULT_MAX_CONCURRENT}`,
};

/** Every provider field, nullable (null clears it), described with the vendor's help text. */
export const providerFieldSchemas = (): Record<string, z.ZodType> =>
  Object.fromEntries(allProviderFields().map((f) => [f.name, f.field.schema.nullable().optional().describe(`${f.field.help} (${FIELD_DOC[f.field.kind]})`)]));

/** "`provider_a_*` for `acme_*`, …": the spec's alias prefixes. */
export const aliasPrefixesText = () =>
  telephonyDescriptors()
    .flatMap((v) => (v.alias ? [`\`${v.alias}_*\` for \`${v.name}_*\``] : []))
    .join(', ');

/**
 * Documents the PUT body; the handler validates it strictly after resolving aliases (unknown
 * keys and other providers' fields are refused there), so unknown keys pass this first check.
 */
export const telephonySettingsPutSchema = () =>
  z
    .looseObject({
      provider: providerSchema().describe(`the active provider: ${providerChoicesText()}`),
      public_base_url: PublicBaseUrlSchema,
      ...providerFieldSchemas(),
    })
    .meta({ id: 'TelephonySettingsUpdate', description: `Partial update. Only fields of the active \`provider\` may be sent; aliases are accepted as field prefixes: ${aliasPrefixesText()}.` });

export const telephonySettingsSchema = () =>
  z.object({
    provider: TelephonyProviderName.nullable(),
    public_base_url: z.string().nullable(),
    ...Object.fromEntries(
      allProviderFields().map((f) => [f.name, (f.field.kind === 'int' ? z.number().int() : z.string()).nullable().describe(`${f.field.help} (${FIELD_DOC[f.field.kind]})`)]),
    ),
  }).meta({ id: 'TelephonySettings', description: 'every field of every provider; null for unset ones' });

const CapabilitySchema = z.object({ supported: z.boolean(), how: z.string() });

export const telephonyProvidersSchema = () =>
  z.array(
    z.object({
      name: TelephonyProviderName.describe('the provider name: in URLs, settings fields and calls'),
      alias: z.string().nullable().describe("the spec's neutral name, accepted on input"),
      label: z.string(),
      docs: z.string().describe('what to set up at the vendor'),
      capabilities: z.object({
        transfer: CapabilitySchema,
        machine_detection: CapabilitySchema,
        send_dtmf: CapabilitySchema,
        warm_transfer: CapabilitySchema,
        audio_formats: z.array(z.string()).describe('media-stream formats, e.g. mulaw/8000, pcm16/16000'),
      }),
      fields: z.array(
        z.object({
          name: z.string().describe('`<provider>_<suffix>`, as in GET/PUT /api/settings/telephony'),
          suffix: z.string(),
          kind: z.enum(['text', 'secret', 'phone', 'url', 'int']),
          secret: z.boolean().describe('stored encrypted, returned masked'),
          label: z.string(),
          help: z.string(),
          default: z.union([z.string(), z.number()]).nullable().describe('applies while the field is unset'),
        }),
      ),
    }).meta({ id: 'TelephonyProviderInfo' }),
  );

const AgentNameSchema = z.string().trim().min(1).max(200);

export const EndpointCreateSchema = z.object({
  phone_number: PhoneNumberSchema,
  provider: providerSchema(),
  inbound_agent_name: AgentNameSchema.nullable().optional().describe('agent answering incoming calls on this number'),
  outbound_agent_name: AgentNameSchema.nullable().optional().describe('agent placing outgoing calls from this number'),
  label: z.string().max(200).nullable().optional(),
}).meta({ id: 'EndpointCreate' });

export const EndpointUpdateSchema = z.object({
  inbound_agent_name: AgentNameSchema.nullable().optional(),
  outbound_agent_name: AgentNameSchema.nullable().optional(),
  label: z.string().max(200).nullable().optional(),
  is_active: z.boolean().optional(),
  phone_number: z.unknown().optional().describe('cannot be changed: delete and re-create the endpoint'),
  provider: z.unknown().optional().describe('cannot be changed: delete and re-create the endpoint'),
}).meta({ id: 'EndpointUpdate' });

export const EndpointSchema = z.object({
  id: z.uuid(),
  phone_number: z.string(),
  provider: TelephonyProviderName,
  inbound_agent_name: z.string().nullable(),
  outbound_agent_name: z.string().nullable(),
  label: z.string().nullable(),
  is_active: z.boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
  inbound_webhook_url: z.string().nullable().describe('{base}/telephony/<provider>/inbound/<inbound_agent_name>; null without an inbound agent'),
}).meta({ id: 'Endpoint' });
