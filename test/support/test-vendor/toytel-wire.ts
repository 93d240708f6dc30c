/**
 * Toytel, a telephony vendor that exists only in the test suite, and its wire protocol — spoken by
 * the vendor's side (./toytel-fake.ts) and by its adapter (./toytel-media.ts, ./toytel-server.ts):
 *
 * - REST: `POST {base}/v1/accounts/{account_id}/calls` (HTTP Basic account_id:api_secret, JSON
 *   `{to, from, answer_url, status_url, ring_timeout_secs}`) → 201 `{id, status: "queued"}`;
 *   `DELETE …/calls/{id}` → 204 (404 for a call that is over). 401 for wrong credentials, 422
 *   `{error}` for a bad number.
 * - Webhooks: JSON POSTs signed with `x-toytel-signature`: hex HMAC-SHA256 under api_secret of
 *   the URL called followed by the body. Inbound call `{call_id, from, to}`; the answer of an
 *   outbound call `{call_id}`; status `{call_id, status, duration_secs?}`. The vendor acts on
 *   200 `{action: "stream", url, params}`, `{action: "reject"}` or `{action: "say", text}`.
 * - Media: a WebSocket to `url`; the vendor sends `{type: "start", stream_id, call_id, params}`,
 *   `{type: "audio", pcm}` (base64 16-bit PCM, 8 kHz, 20 ms), `{type: "played", name}` once
 *   the audio before a mark has played, `{type: "stop"}`; it takes `{type: "audio", pcm}`,
 *   `{type: "mark", name}` and `{type: "clear"}`.
 */
import crypto from 'node:crypto';

export const SIGNATURE_HEADER = 'x-toytel-signature';
export const TOYTEL_STATUSES = ['ringing', 'answered', 'completed', 'busy', 'failed', 'no_answer'] as const;

export function toytelSignature(secret: string, url: string, body: string): string {
  return crypto.createHmac('sha256', secret).update(url + body).digest('hex');
}

export function signatureMatches(secret: string, url: string, body: string, header: unknown): boolean {
  if (typeof header !== 'string' || !/^[0-9a-f]{64}$/.test(header)) return false;
  return crypto.timingSafeEqual(Buffer.from(header, 'hex'), Buffer.from(toytelSignature(secret, url, body), 'hex'));
}
