/**
 * The short-lived token a browser presents in its web call's `start`. Like the telephony stream
 * token (src/gateway/stream/stream-token.ts) it is an HMAC under the platform's JWT secret naming exactly
 * one call; it also carries its expiry and, when a publishable key minted it, the page origin the
 * key allowed: the gateway refuses the socket after the expiry or from another origin.
 *
 *   <expires at, epoch seconds>.<origin, base64url ('' for none)>.<base64url HMAC-SHA256>
 */
import crypto from 'node:crypto';

export interface WebCallGrant {
  callId: string;
  expiresAtSecs: number;
  /** The page origin the socket must come from (`https://shop.example`); null: any (a member's token). */
  origin: string | null;
}

const mac = (secret: string, g: WebCallGrant) =>
  // The prefix keeps these MACs apart from anything else signed with the same secret.
  crypto.createHmac('sha256', secret).update(`web-call:${g.callId}:${g.expiresAtSecs}:${g.origin ?? ''}`, 'utf8').digest('base64url');

export function webCallToken(secret: string, grant: WebCallGrant): string {
  return `${grant.expiresAtSecs}.${Buffer.from(grant.origin ?? '', 'utf8').toString('base64url')}.${mac(secret, grant)}`;
}

export type TokenVerdict = { ok: true } | { ok: false; reason: string };

/** Checks a token for `callId`, presented on a socket whose upgrade came with `origin` (header), at `nowMs`. */
export function verifyWebCallToken(secret: string, token: unknown, callId: string, origin: string | undefined, nowMs: number): TokenVerdict {
  if (typeof token !== 'string' || token.length > 512) return { ok: false, reason: 'invalid stream token' };
  const parts = token.split('.');
  if (parts.length !== 3 || !/^\d{1,12}$/.test(parts[0]!)) return { ok: false, reason: 'invalid stream token' };
  const grant: WebCallGrant = { callId, expiresAtSecs: Number(parts[0]), origin: Buffer.from(parts[1]!, 'base64url').toString('utf8') || null };
  const expected = Buffer.from(mac(secret, grant), 'utf8');
  const given = Buffer.from(parts[2]!, 'utf8');
  // timingSafeEqual needs equal lengths; a length mismatch reveals nothing about the secret.
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return { ok: false, reason: 'invalid stream token' };
  if (nowMs >= grant.expiresAtSecs * 1000) return { ok: false, reason: 'stream token expired' };
  if (grant.origin !== null && grant.origin !== origin) return { ok: false, reason: 'stream from an origin the key does not allow' };
  return { ok: true };
}
