/** The agent's `voicemail` setting (docs/phone-operations.md#voicemail-on-outbound-calls). */
import { z } from 'zod';
import { VOICEMAIL_ACTIONS } from '../../voicemail/settings';
import { strictObject } from './flow';

export const VoicemailSchema = strictObject({
  detect: z.boolean().default(true).describe('listen for an answering machine on outbound calls'),
  action: z.enum(VOICEMAIL_ACTIONS).meta({ id: 'VoicemailAction' }).default('hang_up').describe('on a machine: hang up, or wait for the beep and leave `message`'),
  message: z
    .string()
    .trim()
    .min(1)
    .max(2_000)
    .nullable()
    .default(null)
    .describe('spoken once after the beep (action leave_message); supports {{variable}} placeholders'),
})
  .superRefine((v, ctx) => {
    if (v.action === 'leave_message' && !v.message) {
      ctx.addIssue({ code: 'custom', path: ['message'], message: 'is required when action is leave_message' });
    }
  })
  .meta({ id: 'VoicemailSettings' });
