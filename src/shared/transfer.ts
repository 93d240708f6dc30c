/**
 * Transfer to a human: the agent setting `transfer_destinations` and the `transfer_call` builtin
 * tool's shapes. Shared by the API (validation), the call workflow (the tool schema) and the
 * telephony vendors (the dial). Workflow-safe: types and pure functions only.
 */

/** One place the agent may hand a caller to; exactly one of phone_number / sip_uri. */
export interface TransferDestination {
  /** What the LLM names it by (`transfer_call {destination}`), unique per agent. */
  name: string;
  /** E.164, e.g. +14155550100. */
  phone_number?: string | null;
  /** sip:user@host[:port][;params] (Twilio <Sip>, Plivo <User>). */
  sip_uri?: string | null;
  /** When to choose it: given to the LLM in the tool schema. */
  description: string;
  /** Spoken to the caller before the hand-over ("Connecting you to billing"); may be empty. */
  message: string;
  /** cold (default): the vendor dials and hands over; warm: the caller waits on hold while the agent briefs the human. */
  mode?: TransferMode;
  /** Warm: what the briefing summary says (the LLM's instruction); null: DEFAULT_SUMMARY_PROMPT. */
  summary_prompt?: string | null;
  /** Warm: what the caller hears on hold: an http(s) URL of a WAV/MP3, or `tone` (built in). */
  hold_audio?: string;
  /** Warm: how long the human may take to answer, and to say connect, before the caller comes back. */
  max_wait_secs?: number;
}

export const TRANSFER_MODES = ['cold', 'warm'] as const;
export type TransferMode = (typeof TRANSFER_MODES)[number];
export const DEFAULT_SUMMARY_PROMPT = 'who is calling, what they want, what has been done';
export const HOLD_TONE = 'tone';
export const DEFAULT_WARM_WAIT_SECS = 30;
export const MAX_WARM_WAIT_SECS = 300;

/** The warm-transfer settings of a destination with their defaults (cold destinations carry none). */
export function warmSettings(d: TransferDestination): { summaryPrompt: string; holdAudio: string; maxWaitSecs: number } {
  return {
    summaryPrompt: d.summary_prompt || DEFAULT_SUMMARY_PROMPT,
    holdAudio: d.hold_audio || HOLD_TONE,
    maxWaitSecs: d.max_wait_secs ?? DEFAULT_WARM_WAIT_SECS,
  };
}

export const TRANSFER_CALL = 'transfer_call';
export const MAX_TRANSFER_DESTINATIONS = 20;
export const DESTINATION_NAME = /^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$/;
export const E164 = /^\+[1-9]\d{6,14}$/;
export const SIP_URI = /^sips?:[^\s<>"@]{1,64}@[A-Za-z0-9.-]{1,253}(:\d{1,5})?(;[^\s<>"]{0,200})?$/i;

/** Where a transfer dials: the neutral target a vendor turns into its own <Dial>. */
export interface TransferTarget {
  phoneNumber?: string;
  sipUri?: string;
}

export function transferTarget(d: TransferDestination): TransferTarget {
  return d.phone_number ? { phoneNumber: d.phone_number } : { sipUri: d.sip_uri ?? undefined };
}

/** For events and logs: the number or SIP address dialled. */
export function targetText(t: TransferTarget): string {
  return t.phoneNumber ?? t.sipUri ?? '';
}

/** The vendor's word for how a dial ended, in neutral terms; `answered` is the hand-over. */
export type TransferOutcome = 'answered' | 'completed' | 'busy' | 'no_answer' | 'failed' | 'canceled' | 'voicemail';

/** What the agent is told (and the event says) when a dial did not reach anyone. */
export function failureReason(outcome: TransferOutcome): string {
  switch (outcome) {
    case 'busy':
      return 'busy';
    case 'no_answer':
      return 'no answer';
    case 'canceled':
      return 'canceled';
    case 'voicemail':
      return 'voicemail';
    default:
      return 'the dial failed';
  }
}
