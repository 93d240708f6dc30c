/**
 * Outgoing webhook signing per the Standard Webhooks convention (standardwebhooks.com):
 * headers `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature: v1,<base64>`,
 * where the signature is HMAC-SHA256 over `${id}.${timestamp}.${body}` keyed with the base64-decoded
 * part of a `whsec_` secret.
 */
import crypto from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${crypto.randomBytes(32).toString('base64')}`;
}

export function signWebhook(secret: string, id: string, timestampSecs: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  const mac = crypto.createHmac('sha256', key).update(`${id}.${timestampSecs}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export function webhookHeaders(secret: string, id: string, body: string, now = Date.now()): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, id, timestamp, body),
  };
}
