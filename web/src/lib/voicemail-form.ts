/** The agent form's Voicemail section and its conversion to and from the API's `voicemail`. */
import type { Agent } from '../api/types';

export type VoicemailAction = 'hang_up' | 'leave_message';

export interface VoicemailFormValues {
  detect: boolean;
  action: VoicemailAction;
  message: string;
}

export const VOICEMAIL_FORM_PATHS = ['voicemail.detect', 'voicemail.action', 'voicemail.message'] as const;

export function voicemailFormValues(v: Agent['voicemail'] | undefined): VoicemailFormValues {
  return { detect: v?.detect ?? false, action: (v?.action as VoicemailAction | undefined) ?? 'hang_up', message: v?.message ?? '' };
}

/** The request's `voicemail` (replaced as a whole), or undefined when nothing changed. Off is null. */
export function voicemailRequest(values: VoicemailFormValues, initial: VoicemailFormValues): Record<string, unknown> | null | undefined {
  if (JSON.stringify(values) === JSON.stringify(initial)) return undefined;
  if (!values.detect) return initial.detect ? null : undefined;
  return { detect: true, action: values.action, message: values.message.trim() ? values.message.trim() : null };
}
