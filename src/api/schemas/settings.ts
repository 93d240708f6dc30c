/** Request and response shapes of telephony settings and telephony endpoints. */
import { z } from 'zod';
import { ALL_PROVIDER_FIELDS, DEFAULT_MAX_CONCURRENT, PROVIDER_CHOICES, resolveProvider, type FieldKind } from '../telephony/provider-fields';

export const E164_PATTERN = /^\+[1-9]\d{6,14}$/;
export const PhoneNumberSchema = z.string().regex(E164_PATTERN, 'must be an E.164 number such as +14155550123');

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

/** Provider given by its name or the spec's alias; yields the real name. */
export const ProviderSchema = z
  .string()
  .refine((v) => resolveProvider(v) !== undefined, `must be ${PROVIDER_CHOICES}`)
  .transform((v) => resolveProvider(v)!)
  .describe(PROVIDER_CHOICES);

const nonEmpty = z.string().trim().min(1, 'cannot be empty').max(512);
const VALUE_SCHEMAS: Record<FieldKind, z.ZodType> = {
  text: nonEmpty,
  secret: nonEmpty,
  phone: PhoneNumberSchema,
  url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
  int: z.number().int().min(1).max(100_000),
};

const FIELD_DOC: Record<FieldKind, string> = {
  text: 'plain text',
  secret: 'secret: stored encrypted, returned masked (****last4); sending the masked value back keeps the stored secret',
  phone: 'E.164',
  url: 'URL',
  int: `concurrent calls; null = the default, ${DEFAULT_MAX_CONCURRENT}`,
};

/** Every provider field, nullable (null clears it). */
export const providerFieldSchemas = (): Record<string, z.ZodType> =>
  Object.fromEntries(ALL_PROVIDER_FIELDS.map((f) => [f.name, VALUE_SCHEMAS[f.kind].nullable().optional().describe(FIELD_DOC[f.kind])]));

/**
 * Documents the PUT body; the handler validates it strictly after resolving aliases (unknown
 * keys and other providers' fields are refused there), so unknown keys pass this first check.
 */
export const TelephonySettingsPutSchema = z
  .looseObject({
    provider: ProviderSchema.describe(`the active provider: ${PROVIDER_CHOICES}`),
    public_base_url: PublicBaseUrlSchema,
    ...providerFieldSchemas(),
  })
  .describe(
    'Partial update. Only fields of the active `provider` may be sent; `provider_a_*`, `provider_b_*`, `provider_c_*` are accepted as aliases of `twilio_*`, `exotel_*`, `plivo_*`.',
  );

export const TelephonySettingsSchema = z.object({
  provider: z.string().nullable(),
  public_base_url: z.string().nullable(),
  ...Object.fromEntries(
    ALL_PROVIDER_FIELDS.map((f) => [f.name, (f.kind === 'int' ? z.number().int() : z.string()).nullable().describe(FIELD_DOC[f.kind])]),
  ),
});

const AgentNameSchema = z.string().trim().min(1).max(200);

export const EndpointCreateSchema = z.object({
  phone_number: PhoneNumberSchema,
  provider: ProviderSchema,
  inbound_agent_name: AgentNameSchema.nullable().optional().describe('agent answering incoming calls on this number'),
  outbound_agent_name: AgentNameSchema.nullable().optional().describe('agent placing outgoing calls from this number'),
  label: z.string().max(200).nullable().optional(),
});

export const EndpointUpdateSchema = z.object({
  inbound_agent_name: AgentNameSchema.nullable().optional(),
  outbound_agent_name: AgentNameSchema.nullable().optional(),
  label: z.string().max(200).nullable().optional(),
  is_active: z.boolean().optional(),
  phone_number: z.unknown().optional().describe('cannot be changed: delete and re-create the endpoint'),
  provider: z.unknown().optional().describe('cannot be changed: delete and re-create the endpoint'),
});

export const EndpointSchema = z.object({
  id: z.uuid(),
  phone_number: z.string(),
  provider: z.string(),
  inbound_agent_name: z.string().nullable(),
  outbound_agent_name: z.string().nullable(),
  label: z.string().nullable(),
  is_active: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
  inbound_webhook_url: z.string().nullable().describe('{base}/telephony/<provider>/inbound/<inbound_agent_name>; null without an inbound agent'),
});
