/**
 * Twilio call statuses → neutral provider statuses (→ the platform's call statuses, through
 * CALL_STATUS_OF). The one place Twilio's status words are mapped.
 *
 * | Twilio `CallStatus`                  | neutral      | call status   | why                                  |
 * |--------------------------------------|--------------|---------------|--------------------------------------|
 * | `queued`, `initiated`, `ringing`     | `ringing`    | `ringing`     | dialing; nobody has answered yet     |
 * | `in-progress` (event `answered`)     | `answered`   | `in_progress` | the callee picked up                 |
 * | `completed`                          | `completed`  | `completed`   | an answered call ended               |
 * | `busy`                               | `busy`       | `no_answer`   | the line was busy: never answered    |
 * | `no-answer`                          | `no_answer`  | `no_answer`   | rang for `Timeout` seconds           |
 * | `canceled`                           | `canceled`   | `no_answer`   | hung up by us while queued/ringing   |
 * | `failed`                             | `failed`     | `failed`      | Twilio could not place the call      |
 *
 * `initiated` is not in the REST resource's enum but is what the `initiated` status callback
 * carries. Anything else maps to null (ignored).
 */
import { CALL_STATUS_OF, type CallTransition, type ProviderCallStatus, type StatusUpdate } from '../types';
import { countField, field } from '../webhook-fields';

export const TWILIO_CALL_STATUSES = ['queued', 'initiated', 'ringing', 'in-progress', 'completed', 'busy', 'failed', 'no-answer', 'canceled'] as const;
export type TwilioCallStatus = (typeof TWILIO_CALL_STATUSES)[number];

const NEUTRAL: Record<TwilioCallStatus, ProviderCallStatus> = {
  queued: 'ringing',
  initiated: 'ringing',
  ringing: 'ringing',
  'in-progress': 'answered',
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'no_answer',
  canceled: 'canceled',
  failed: 'failed',
};

export function twilioNeutralStatus(callStatus: string): ProviderCallStatus | null {
  return Object.hasOwn(NEUTRAL, callStatus) ? NEUTRAL[callStatus as TwilioCallStatus] : null;
}

/** The platform call status a Twilio CallStatus moves a call to; null for a word Twilio does not define. */
export function twilioStatusTransition(callStatus: string): CallTransition | null {
  const neutral = twilioNeutralStatus(callStatus);
  return neutral === null ? null : CALL_STATUS_OF[neutral];
}

/**
 * Decodes a status callback's form parameters (`CallSid`, `CallStatus`, `CallDuration`,
 * `SequenceNumber`, `SipResponseCode`, `ErrorCode`…). Returns null when `CallSid` or
 * `CallStatus` is missing — not a status callback. Check the signature first.
 */
export function parseTwilioStatusCallback(params: Record<string, unknown>): StatusUpdate | null {
  const callSid = params.CallSid;
  const callStatus = params.CallStatus;
  if (typeof callSid !== 'string' || callSid === '' || typeof callStatus !== 'string' || callStatus === '') return null;
  const update: StatusUpdate = { providerCallId: callSid, providerStatus: callStatus, status: twilioNeutralStatus(callStatus) };
  const duration = countField(params, 'CallDuration');
  if (duration !== undefined) update.durationSecs = duration;
  const sequence = countField(params, 'SequenceNumber');
  if (sequence !== undefined) update.sequenceNumber = sequence;
  const detail: Record<string, unknown> = {};
  for (const [from, to] of [['SipResponseCode', 'sip_response_code'], ['ErrorCode', 'error_code'], ['ErrorMessage', 'error']] as const) {
    const v = field(params, from);
    if (v) detail[to] = v.slice(0, 500);
  }
  if (Object.keys(detail).length) update.detail = detail;
  return update;
}
