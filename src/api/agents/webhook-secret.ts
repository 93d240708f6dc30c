import crypto from 'node:crypto';

/** Signing secret of an agent's outgoing webhooks: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}
