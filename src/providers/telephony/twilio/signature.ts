/**
 * X-Twilio-Signature checks. Twilio signs every webhook with HMAC-SHA1(authToken, the full URL it
 * called + each POST parameter as name+value, sorted by name), base64. The URL must be the one
 * Twilio was given — built from the public base URL — not what a proxy turned it into, so the
 * helpers here rebuild it from the configured public URL rather than from the Host header.
 */
import type { IncomingHttpHeaders } from 'node:http';
import twilio from 'twilio';
import { publicRequestUrl } from '../public-url';

export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';

export type TwilioParams = Record<string, string | string[] | undefined>;

/**
 * True when `signatureHeader` is Twilio's signature of `fullUrl` and `params` under `authToken`.
 * Uses the SDK's validator (constant-time compare; tries the URL with and without :443/:80).
 * Never throws: a missing header or unparsable URL is simply invalid.
 */
export function validateTwilioSignature(
  authToken: string,
  signatureHeader: string | string[] | undefined,
  fullUrl: string,
  params: TwilioParams,
): boolean {
  if (typeof signatureHeader !== 'string' || signatureHeader === '' || !authToken) return false;
  const clean: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(params)) if (v !== undefined) clean[k] = v;
  try {
    return twilio.validateRequest(authToken, signatureHeader, fullUrl, clean);
  } catch {
    return false;
  }
}

/** The parts of an Express request the check reads (structural, so no framework import here). */
export interface SignedHttpRequest {
  method: string;
  originalUrl: string;
  headers: IncomingHttpHeaders;
  /** Parsed form body (express.urlencoded); ignored for GET, where Twilio signs the URL alone. */
  body?: unknown;
}

/** Checks an Express request from Twilio (form POST or GET) against the public base URL. */
export function validateTwilioHttpRequest(
  req: SignedHttpRequest,
  opts: { authToken: string; publicBaseUrl: string },
): boolean {
  const params =
    req.method.toUpperCase() === 'POST' && req.body && typeof req.body === 'object' ? (req.body as TwilioParams) : {};
  return validateTwilioSignature(
    opts.authToken,
    req.headers[TWILIO_SIGNATURE_HEADER],
    publicRequestUrl(opts.publicBaseUrl, req.originalUrl),
    params,
  );
}

/**
 * Checks the signature on a Media Streams WebSocket upgrade. Twilio signs the stream URL exactly
 * as written in the TwiML (`wss://host/path`, no parameters), so pass that URL — e.g. the public
 * gateway base + the request path. `wss://host/path` and `wss://host:443/path` are equivalent
 * (the SDK's port variants only know https, so the :443 form is added here).
 */
export function validateTwilioWebSocketUpgrade(
  authToken: string,
  headers: IncomingHttpHeaders,
  streamUrl: string,
): boolean {
  return validateTwilioSignature(authToken, headers[TWILIO_SIGNATURE_HEADER], withDefaultWssPort(streamUrl), {});
}

function withDefaultWssPort(url: string): string {
  const m = /^(wss:\/\/)([^/?#:]+)(\/.*)?$/i.exec(url);
  return m ? `${m[1]}${m[2]}:443${m[3] ?? ''}` : url;
}

/** The signature Twilio would send; for tests and fakes that play Twilio's part. */
export function computeTwilioSignature(authToken: string, fullUrl: string, params: Record<string, string>): string {
  return twilio.getExpectedTwilioSignature(authToken, fullUrl, params);
}
