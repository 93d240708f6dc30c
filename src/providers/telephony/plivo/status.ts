/**
 * Plivo call statuses → neutral provider statuses (→ the platform's call statuses, through
 * CALL_STATUS_OF). The one place Plivo's status words are mapped.
 *
 * | Plivo `CallStatus`   | neutral     | call status   | why                                           |
 * |----------------------|-------------|---------------|-----------------------------------------------|
 * | `queued`, `ringing`  | `ringing`   | `ringing`     | dialing; nobody has answered yet              |
 * | `in-progress`        | `answered`  | `in_progress` | the callee picked up (answer URL requested)   |
 * | `completed`          | `completed` | `completed`   | an answered call ended (either side hung up)  |
 * | `busy`               | `busy`      | `no_answer`   | the line was busy: never answered             |
 * | `no-answer`          | `no_answer` | `no_answer`   | the callee did not pick up                    |
 * | `timeout`            | `no_answer` | `no_answer`   | rang for `ring_timeout` seconds               |
 * | `cancel`             | `canceled`  | `no_answer`   | canceled by us while queued or ringing        |
 * | `failed`             | `failed`    | `failed`      | Plivo could not place the call                |
 *
 * Plivo reports these on the ring URL (`ringing`), the answer URL (`in-progress` outbound,
 * `ringing` inbound) and the hangup URL (the final status, with `HangupCause`, `Duration`,
 * `BillDuration`). Anything else maps to null (ignored).
 */
import { CALL_STATUS_OF, type CallTransition, type ProviderCallStatus, type StatusUpdate } from '../types';
import { countField, field } from '../webhook-fields';

export const PLIVO_CALL_STATUSES = ['queued', 'ringing', 'in-progress', 'completed', 'busy', 'no-answer', 'timeout', 'cancel', 'failed'] as const;
export type PlivoCallStatus = (typeof PLIVO_CALL_STATUSES)[number];

const NEUTRAL: Record<PlivoCallStatus, ProviderCallStatus> = {
  queued: 'ringing',
  ringing: 'ringing',
  'in-progress': 'answered',
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'no_answer',
  timeout: 'no_answer',
  cancel: 'canceled',
  failed: 'failed',
};

export function plivoNeutralStatus(callStatus: string): ProviderCallStatus | null {
  return Object.hasOwn(NEUTRAL, callStatus) ? NEUTRAL[callStatus as PlivoCallStatus] : null;
}

/** The platform call status a Plivo CallStatus moves a call to; null for a word Plivo does not define. */
export function plivoStatusTransition(callStatus: string): CallTransition | null {
  const neutral = plivoNeutralStatus(callStatus);
  return neutral === null ? null : CALL_STATUS_OF[neutral];
}

const DETAIL_FIELDS = [
  ['HangupCause', 'hangup_cause'],
  ['HangupSource', 'hangup_source'],
  ['RequestUUID', 'request_uuid'],
  ['Event', 'plivo_event'],
] as const;

/**
 * Decodes the form parameters of a Plivo call callback (ring, answer or hangup URL): `CallUUID`,
 * `CallStatus`, `Duration`, `BillDuration`, `HangupCause`, `HangupSource`, `RequestUUID`, `Event`.
 * Returns null when `CallUUID` or `CallStatus` is missing — not a call callback (e.g. a stream
 * status callback). Check the signature first.
 */
export function parsePlivoCallback(params: Record<string, unknown>): StatusUpdate | null {
  const callUuid = field(params, 'CallUUID');
  const callStatus = field(params, 'CallStatus');
  if (!callUuid || !callStatus) return null;
  const update: StatusUpdate = { providerCallId: callUuid, providerStatus: callStatus, status: plivoNeutralStatus(callStatus) };
  const duration = countField(params, 'Duration');
  if (duration !== undefined) update.durationSecs = duration;
  const detail: Record<string, unknown> = {};
  for (const [from, to] of DETAIL_FIELDS) {
    const v = field(params, from);
    if (v) detail[to] = v.slice(0, 200);
  }
  const billed = countField(params, 'BillDuration');
  if (billed !== undefined) detail.bill_duration = billed;
  if (Object.keys(detail).length) update.detail = detail;
  return update;
}
