/**
 * Twilio call statuses → the platform's call statuses.
 *
 * | Twilio `CallStatus`                  | platform      | why                                          |
 * |--------------------------------------|---------------|----------------------------------------------|
 * | `queued`, `initiated`, `ringing`     | `ringing`     | dialing; nobody has answered yet             |
 * | `in-progress` (event `answered`)     | `in_progress` | the callee picked up                         |
 * | `completed`                          | `completed`   | an answered call ended (either side hung up) |
 * | `busy`                               | `no_answer`   | the line was busy: never answered            |
 * | `no-answer`                          | `no_answer`   | rang for `Timeout` seconds unanswered        |
 * | `canceled`                           | `no_answer`   | hung up by us while queued or ringing        |
 * | `failed`                             | `failed`      | Twilio could not place the call              |
 *
 * `initiated` is not in the REST resource's enum but is what the `initiated` status callback
 * carries. Anything else maps to null (recorded, no transition).
 */
import type { CallTransition, ProviderStatusUpdate } from '../types';

export const TWILIO_CALL_STATUSES = [
  'queued',
  'initiated',
  'ringing',
  'in-progress',
  'completed',
  'busy',
  'failed',
  'no-answer',
  'canceled',
] as const;
export type TwilioCallStatus = (typeof TWILIO_CALL_STATUSES)[number];

const TRANSITIONS: Record<TwilioCallStatus, CallTransition> = {
  queued: 'ringing',
  initiated: 'ringing',
  ringing: 'ringing',
  'in-progress': 'in_progress',
  completed: 'completed',
  busy: 'no_answer',
  'no-answer': 'no_answer',
  canceled: 'no_answer',
  failed: 'failed',
};

export function twilioStatusTransition(callStatus: string): CallTransition | null {
  return Object.hasOwn(TRANSITIONS, callStatus) ? TRANSITIONS[callStatus as TwilioCallStatus] : null;
}

export function isTerminalTwilioStatus(callStatus: string): boolean {
  return ['completed', 'busy', 'no-answer', 'canceled', 'failed'].includes(callStatus);
}

function nonNegativeInt(value: unknown): number | undefined {
  return typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : undefined;
}

/**
 * Decodes a status callback's form parameters (`CallSid`, `CallStatus`, `CallDuration`,
 * `SequenceNumber`…). Returns null when `CallSid` or `CallStatus` is missing — not a status
 * callback. Check the signature first.
 */
export function parseTwilioStatusCallback(params: Record<string, unknown>): ProviderStatusUpdate | null {
  const callSid = params.CallSid;
  const callStatus = params.CallStatus;
  if (typeof callSid !== 'string' || callSid === '' || typeof callStatus !== 'string' || callStatus === '') return null;
  const update: ProviderStatusUpdate = {
    providerCallId: callSid,
    providerStatus: callStatus,
    transition: twilioStatusTransition(callStatus),
  };
  const duration = nonNegativeInt(params.CallDuration);
  if (duration !== undefined) update.durationSecs = duration;
  const sequence = nonNegativeInt(params.SequenceNumber);
  if (sequence !== undefined) update.sequenceNumber = sequence;
  return update;
}
