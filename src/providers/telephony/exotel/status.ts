/**
 * Exotel call statuses → neutral provider statuses (→ the platform's call statuses, through
 * CALL_STATUS_OF). The one place Exotel's status words are mapped.
 *
 * | Exotel `Status`         | neutral     | call status   | why                                         |
 * |-------------------------|-------------|---------------|---------------------------------------------|
 * | `queued`, `ringing`     | `ringing`   | `ringing`     | dialing; nobody has answered yet            |
 * | `in-progress`           | `answered`  | `in_progress` | the callee picked up (EventType `answered`) |
 * | `completed`             | `completed` | `completed`   | an answered call ended                      |
 * | `busy`                  | `busy`      | `no_answer`   | the line was busy                           |
 * | `no-answer`             | `no_answer` | `no_answer`   | nobody picked up                            |
 * | `canceled`              | `canceled`  | `no_answer`   | canceled while queued or ringing            |
 * | `failed`                | `failed`    | `failed`      | Exotel could not place the call             |
 *
 * Exotel's StatusCallback posts `CallSid`, `Status`, `DateUpdated`, `RecordingUrl` and, for the
 * subscribed events, `EventType` (`answered`, `terminal`), `ConversationDuration`, `Direction`,
 * `CustomField`… as a form (JSON is accepted too: not every Exotel product posts forms).
 */
import { CALL_STATUS_OF, type CallTransition, type ProviderCallStatus, type StatusUpdate } from '../types';
import { countField, field } from '../webhook-fields';

export const EXOTEL_CALL_STATUSES = ['queued', 'ringing', 'in-progress', 'completed', 'busy', 'no-answer', 'canceled', 'failed'] as const;
export type ExotelCallStatus = (typeof EXOTEL_CALL_STATUSES)[number];

const NEUTRAL: Record<ExotelCallStatus, ProviderCallStatus> = {
  queued: 'ringing',
  ringing: 'ringing',
  'in-progress': 'answered',
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'no_answer',
  canceled: 'canceled',
  failed: 'failed',
};

export function exotelNeutralStatus(status: string): ProviderCallStatus | null {
  const word = status.toLowerCase().replace('_', '-');
  return Object.hasOwn(NEUTRAL, word) ? NEUTRAL[word as ExotelCallStatus] : null;
}

/** The platform call status an Exotel status moves a call to; null for a word Exotel does not define. */
export function exotelStatusTransition(status: string): CallTransition | null {
  const neutral = exotelNeutralStatus(status);
  return neutral === null ? null : CALL_STATUS_OF[neutral];
}

/** The callback's fields: top-level (form or JSON), or inside a `call` / `Call` object. */
export function exotelParams(params: Record<string, unknown>): Record<string, unknown> {
  const nested = params.call ?? params.Call;
  return nested && typeof nested === 'object' && !Array.isArray(nested) ? { ...params, ...(nested as Record<string, unknown>) } : params;
}

/** A field by Exotel's PascalCase name or its snake/lower-case form. */
export function exotelField(params: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const name of names) {
    const v = field(params, name) ?? field(params, name.toLowerCase()) ?? field(params, name.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase());
    if (v !== undefined) return v;
  }
  return undefined;
}

const DETAIL_FIELDS = [
  ['EventType', 'exotel_event'],
  ['Direction', 'direction'],
  ['DateUpdated', 'date_updated'],
] as const;

/**
 * Decodes a StatusCallback. Null when `CallSid` or `Status` is missing: not a call status. The
 * duration is `ConversationDuration` (talk time) when present, else `Duration`.
 */
export function parseExotelCallback(raw: Record<string, unknown>): StatusUpdate | null {
  const params = exotelParams(raw);
  const callSid = exotelField(params, 'CallSid', 'Sid');
  const status = exotelField(params, 'Status', 'CallStatus');
  if (!callSid || !status) return null;
  const update: StatusUpdate = { providerCallId: callSid.slice(0, 128), providerStatus: status.slice(0, 40), status: exotelNeutralStatus(status) };
  const duration = countField(params, 'ConversationDuration') ?? countField(params, 'conversation_duration') ?? countField(params, 'Duration');
  if (duration !== undefined) update.durationSecs = duration;
  const detail: Record<string, unknown> = {};
  for (const [from, to] of DETAIL_FIELDS) {
    const v = exotelField(params, from);
    if (v) detail[to] = v.slice(0, 200);
  }
  if (Object.keys(detail).length) update.detail = detail;
  return update;
}
