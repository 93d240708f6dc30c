/**
 * The agent's `voicemail` setting and the call's `answered_by` (docs/phone-operations.md#voicemail-on-outbound-calls).
 * Types and vocabularies only: imported by workflow code, the API and the gateway.
 */

export const VOICEMAIL_ACTIONS = ['hang_up', 'leave_message'] as const;
export type VoicemailAction = (typeof VOICEMAIL_ACTIONS)[number];

/** Who answered an outbound call whose agent detects voicemail; null when nothing was detected. */
export const ANSWERED_BY = ['human', 'machine', 'unknown'] as const;
export type AnsweredBy = (typeof ANSWERED_BY)[number];

export interface VoicemailSettings {
  /** Listen for an answering machine on outbound calls (the vendor's AMD and the gateway's). */
  detect: boolean;
  action: VoicemailAction;
  /** Spoken once after the beep with `leave_message`; `{{variable}}` from the call's parameters. */
  message: string | null;
}

/** What a call's gateway needs to act on a machine (message already substituted). */
export interface VoicemailPlan {
  action: VoicemailAction;
  message: string | null;
  /** The utterance id of the message (names its TTS events). */
  utteranceId: string;
}

/** Where a verdict came from: the telephony vendor's AMD callback, or the gateway's detector. */
export type VerdictSource = 'vendor' | 'gateway';

/** A verdict on who answered, signalled to the call workflow (`answeredBy`). */
export interface AnsweredByVerdict {
  answered_by: AnsweredBy;
  source: VerdictSource;
  /** Why: `long_greeting`, `beep`, `short_greeting`, or the vendor's own value (`machine_start`, …). */
  reason: string;
  /** The vendor reports that the machine's greeting ended with its beep (message may be spoken now). */
  beep_heard?: boolean;
  /** Milliseconds since the call's audio started (gateway verdicts). */
  at_ms?: number;
  /** Gateway verdicts: how long the callee's first burst of speech was (so far), ms. */
  speech_ms?: number;
  /** Gateway verdicts on a beep: its frequency, Hz. */
  beep_hz?: number;
}
