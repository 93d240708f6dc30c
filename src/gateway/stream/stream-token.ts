/**
 * Authenticates a telephony media stream. Twilio cannot put a query string on the `<Stream>` URL,
 * so the TwiML that connects a call passes `call_id` and `token` as `<Parameter>`s; they arrive in
 * the stream's `start.customParameters`. The token is an HMAC of the call id under the platform's
 * JWT secret: only the API (which wrote the TwiML) can mint it, and it names exactly one call.
 */
import crypto from 'node:crypto';

/** base64url(HMAC-SHA256(secret, "media-stream:" + callId)). */
export function streamToken(secret: string, callId: string): string {
  // The prefix keeps these MACs apart from anything else signed with the same secret.
  return crypto.createHmac('sha256', secret).update(`media-stream:${callId}`, 'utf8').digest('base64url');
}

/** Constant-time check of a token received in a stream's `start` message. */
export function verifyStreamToken(secret: string, callId: string, token: unknown): boolean {
  if (typeof token !== 'string' || typeof callId !== 'string' || callId === '') return false;
  const expected = Buffer.from(streamToken(secret, callId), 'utf8');
  const given = Buffer.from(token, 'utf8');
  // timingSafeEqual needs equal lengths; a length mismatch reveals nothing about the secret.
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}
