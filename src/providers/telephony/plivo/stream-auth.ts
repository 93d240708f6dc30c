/**
 * Our per-call stream credentials (call id + token, see src/gateway/stream/stream-token.ts) travel in the
 * `<Stream extraHeaders>` attribute, which Plivo hands back in the stream's `start` message — never
 * in the stream URL, where they would end up in proxy and access logs.
 *
 * Plivo allows only [A-Za-z0-9] in extraHeaders keys and values (512 bytes at most), so the call
 * id (a UUID) travels without its dashes and the base64url token as hex:
 * `callid=6f1c…(32 hex),token=…(64 hex)` — 112 bytes.
 */

export const CALL_ID_HEADER = 'callid';
export const TOKEN_HEADER = 'token';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX32 = /^[0-9a-f]{32}$/i;
const HEX = /^(?:[0-9a-f]{2})+$/i;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The extraHeaders value carrying a call's stream credentials. */
export function plivoStreamExtraHeaders(callId: string, token: string): string {
  if (!UUID.test(callId)) throw new Error('Plivo stream: the call id must be a UUID');
  if (!BASE64URL.test(token)) throw new Error('Plivo stream: the token must be base64url');
  const hexToken = Buffer.from(token, 'base64url').toString('hex');
  return `${CALL_ID_HEADER}=${callId.replace(/-/g, '').toLowerCase()},${TOKEN_HEADER}=${hexToken}`;
}

/**
 * The call id and token from a `start` message's decoded extra headers, back in their usual
 * forms (dashed UUID, base64url). Null when either is missing or malformed — an unauthenticated
 * stream.
 */
export function plivoStreamCredentials(extraHeaders: Record<string, string>): { callId: string; token: string } | null {
  const id = extraHeaders[CALL_ID_HEADER];
  const token = extraHeaders[TOKEN_HEADER];
  if (typeof id !== 'string' || !HEX32.test(id) || typeof token !== 'string' || !HEX.test(token) || token.length > 256) return null;
  const h = id.toLowerCase();
  const callId = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  return { callId, token: Buffer.from(token, 'hex').toString('base64url') };
}
