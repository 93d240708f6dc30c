/**
 * Twilio's asynchronous answering-machine detection callback (AsyncAmdStatusCallback, form POST,
 * signed like every webhook): `CallSid`, `AccountSid`, `AnsweredBy`, `MachineDetectionDuration`.
 * `AnsweredBy`: `human`; `machine_start` (MachineDetection=Enable); `machine_end_beep`,
 * `machine_end_silence`, `machine_end_other` (DetectMessageEnd: the greeting is over — Twilio's
 * advice is to start the message now); `fax`; `unknown`.
 */
import type { MachineDetectionResult } from '../types';
import { field } from '../webhook-fields';
import type { AnsweredBy } from '../../../voicemail/settings';

const ANSWERED_BY: Record<string, AnsweredBy> = {
  human: 'human',
  machine_start: 'machine',
  machine_end_beep: 'machine',
  machine_end_silence: 'machine',
  machine_end_other: 'machine',
  fax: 'machine',
  unknown: 'unknown',
};

export function parseTwilioAmdCallback(params: Record<string, unknown>): MachineDetectionResult | null {
  const word = field(params, 'AnsweredBy');
  if (!word) return null;
  const sid = field(params, 'CallSid');
  return {
    providerCallId: sid && /^CA[0-9a-f]{32}$/i.test(sid) ? sid : null,
    answeredBy: ANSWERED_BY[word] ?? 'unknown',
    providerResult: word,
    greetingEnded: word.startsWith('machine_end_'),
  };
}
