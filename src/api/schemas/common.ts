/**
 * Schemas many resources share, each named once (`.meta({ id })`) so the OpenAPI document has one
 * component for it and a generated client one type: timestamps, provider names and the closed
 * sets of values (statuses, directions, event types…).
 */
import { z } from 'zod';
import { ANALYSIS_STATUSES } from '../../analysis/types';
import { providerChoicesText, telephonyDescriptors } from '../../providers/telephony/registry';
import { BUILTIN_TOOLS, CALL_STATUSES, CAMPAIGN_EVENT_TYPES, DIRECTIONS, END_REASONS, EVENT_TYPES, LLM_PROVIDERS, STT_MODES, STT_PROVIDERS, TTS_PROVIDERS } from '../../shared/catalog';

/**
 * The spec's one timestamp form: UTC, no offset, whole seconds. Documented as `date-time` (what
 * generators turn into their date type) with the exact pattern, since RFC 3339 would want an offset.
 */
export const Timestamp = z.string().meta({
  format: 'date-time',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}$',
  description: 'UTC without an offset, YYYY-MM-DDTHH:MM:SS (read it as UTC)',
});

/** The event trace's form: the same with milliseconds. */
export const PreciseTimestamp = z.string().meta({
  format: 'date-time',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}$',
  description: 'UTC without an offset, with milliseconds, YYYY-MM-DDTHH:MM:SS.mmm (read it as UTC)',
});

/**
 * A provider name of a registry. `names` is the registry's live list, read at each validation
 * and when the OpenAPI document is built (its `enum`), so a vendor registered at start-up is
 * accepted and documented like the built-in ones. Worded as zod words an enum.
 */
const providerName = (id: string, names: readonly string[]) =>
  z
    .string()
    .refine((v) => names.includes(v), { error: () => `Invalid option: expected one of ${names.map((n) => JSON.stringify(n)).join('|')}` })
    .meta({ id, enum: names });

export const SttProvider = providerName('SttProvider', STT_PROVIDERS);
export const LlmProvider = providerName('LlmProvider', LLM_PROVIDERS);
export const TtsProvider = providerName('TtsProvider', TTS_PROVIDERS);

/**
 * A telephony provider as the API answers it. The vendors are registered at start-up, after this
 * module loads, so the list is a getter read when the document is built.
 */
export const TelephonyProviderName = z.string().meta({
  id: 'TelephonyProvider',
  description: 'a registered telephony vendor',
  get enum() {
    return telephonyDescriptors().map((v) => v.name);
  },
});

/**
 * What a telephony `provider` field accepts: a name or the spec's alias (provider_a…). Getters
 * too: some schemas that take a provider are built at import, before the vendors register.
 */
export const telephonyProviderInputMeta = {
  id: 'TelephonyProvider',
  get description() {
    return providerChoicesText();
  },
  get enum() {
    return telephonyDescriptors().flatMap((v) => [v.name, ...(v.alias ? [v.alias] : [])]);
  },
};

export const SttMode = z.enum(STT_MODES).meta({ id: 'SttMode' });
export const CallStatus = z.enum(CALL_STATUSES).meta({ id: 'CallStatus' });
export const CallDirection = z.enum(DIRECTIONS).meta({ id: 'CallDirection' });
export const EndReason = z.enum(END_REASONS).meta({ id: 'EndReason' });
export const EventType = z.enum(EVENT_TYPES).meta({ id: 'EventType' });
export const CampaignEventType = z.enum(CAMPAIGN_EVENT_TYPES).meta({ id: 'CampaignEventType', description: "a campaign's status change (docs/campaigns.md)" });
/** What an agent's webhook may subscribe to: its calls' events and its campaigns' status changes. */
export const WebhookEventType = z.union([EventType, CampaignEventType]);
export const BuiltinTool = z.enum(BUILTIN_TOOLS).meta({ id: 'BuiltinTool' });
export const AnalysisStatus = z.enum(ANALYSIS_STATUSES).meta({ id: 'AnalysisStatus' });
export const WebhookMethod = z.enum(['POST', 'GET']).meta({ id: 'WebhookMethod' });
export const SpeakerRole = z.enum(['user', 'assistant']).meta({ id: 'SpeakerRole', description: 'who spoke: the caller (user) or the agent (assistant)' });
export const UserRole = z.enum(['admin', 'member']).meta({ id: 'UserRole' });

/** JSON Schema types a tool or flow-function parameter may have. */
export const PARAMETER_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array'] as const;
export const ParameterType = z.enum(PARAMETER_TYPES).meta({ id: 'ParameterType' });
