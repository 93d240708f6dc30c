/**
 * Plivo call statuses → the platform's call statuses.
 *
 * | Plivo `CallStatus`         | platform      | why                                                  |
 * |----------------------------|---------------|------------------------------------------------------|
 * | `queued`, `ringing`        | `ringing`     | dialing; nobody has answered yet                     |
 * | `in-progress`              | `in_progress` | the callee picked up (the answer URL is being asked) |
 * | `completed`                | `completed`   | an answered call ended (either side hung up)         |
 * | `busy`                     | `no_answer`   | the line was busy: never answered                    |
 * | `no-answer`, `timeout`     | `no_answer`   | rang unanswered (`timeout`: our ring_timeout)        |
 * | `cancel`                   | `no_answer`   | canceled by us while queued or ringing               |
 * | `failed`                   | `failed`      | Plivo could not place the call                       |
 *
 * Plivo reports these on the ring URL (`ringing`), the answer URL (`in-progress` outbound,
 * `ringing` inbound) and the hangup URL (the final status, with `HangupCause`, `Duration`,
 * `BillDuration`). Anything else maps to null (recorded, no transition).
 */
import type { CallTransition, ProviderStatusUpdate } from '../types';

const TRANSITIONS: Record<string, CallTransition> = {
  queued: 'ringing',
  ringing: 'ringing',
  'in-progress': 'in_progress',
  completed: 'completed',
  busy: 'no_answer',
  'no-answer': 'no_answer',
  timeout: 'no_answer',
  cancel: 'no_answer',
  canceled: 'no_answer',
  failed: 'failed',
};

export function plivoStatusTransition(callStatus: string): CallTransition | null {
  return Object.hasOwn(TRANSITIONS, callStatus) ? TRANSITIONS[callStatus] : null;
}

export function isTerminalPlivoStatus(callStatus: string): boolean {
  const t = plivoStatusTransition(callStatus);
  return t === 'completed' || t === 'no_answer' || t === 'failed';
}

function nonNegativeInt(value: unknown): number | undefined {
  return typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : undefined;
}

/** A decoded Plivo callback: the neutral update plus Plivo's own words for the call_status event. */
export interface PlivoStatusUpdate extends ProviderStatusUpdate {
  /** `RequestUUID` of an outbound call placed through the API (differs from `CallUUID`). */
  requestUuid?: string;
  /** `HangupCause` on the hangup URL, e.g. `NORMAL_CLEARING`, `USER_BUSY`. */
  hangupCause?: string;
  /** `Event`: `Ring`, `StartApp`, `Hangup`, … */
  event?: string;
}

/**
 * Decodes the form parameters of a Plivo call callback (ring, answer or hangup URL): `CallUUID`,
 * `CallStatus`, `Duration`, `HangupCause`, `RequestUUID`, `Event`. Returns null when `CallUUID` or
 * `CallStatus` is missing — not a call callback. Check the signature first.
 */
export function parsePlivoCallback(params: Record<string, unknown>): PlivoStatusUpdate | null {
  const callUuid = params.CallUUID;
  const callStatus = params.CallStatus;
  if (typeof callUuid !== 'string' || callUuid === '' || typeof callStatus !== 'string' || callStatus === '') return null;
  const update: PlivoStatusUpdate = {
    providerCallId: callUuid,
    providerStatus: callStatus,
    transition: plivoStatusTransition(callStatus),
  };
  const duration = nonNegativeInt(params.Duration);
  if (duration !== undefined) update.durationSecs = duration;
  for (const [key, field] of [['RequestUUID', 'requestUuid'], ['HangupCause', 'hangupCause'], ['Event', 'event']] as const) {
    const v = params[key];
    if (typeof v === 'string' && v !== '') update[field] = v;
  }
  return update;
}
