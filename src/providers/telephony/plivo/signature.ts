/**
 * X-Plivo-Signature-V3 checks. Plivo signs every callback with
 * base64(HMAC-SHA256(authToken, url + params + "." + nonce)), where for a POST the url is the one
 * Plivo called (query sorted) followed by the body parameters sorted as key+value, and sends the
 * nonce in X-Plivo-Signature-V3-Nonce. The header may list several comma-separated signatures
 * (one per token while an Auth Token is being rotated); one match is enough.
 *
 * The URL must be the one Plivo was given — built from the public base URL — not what a proxy
 * turned it into, so it is rebuilt from the configured public URL rather than the Host header.
 * The check itself is the SDK's (`validateV3Signature`).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { validateV3Signature } from 'plivo';
// The public-URL rebuild is vendor-neutral; it lives with the first vendor that needed it.
import { publicRequestUrl } from '../public-url';

export const PLIVO_SIGNATURE_HEADER = 'x-plivo-signature-v3';
export const PLIVO_NONCE_HEADER = 'x-plivo-signature-v3-nonce';

export type PlivoParams = Record<string, unknown>;

/** Form fields as the SDK wants them: strings, or arrays of strings for repeated fields. */
function cleanParams(params: PlivoParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(params)) {
    if (typeof v === 'string') out[k] = v;
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) out[k] = [...v];
  }
  return out;
}

/**
 * True when `signatureHeader` holds Plivo's V3 signature of this request under `authToken`.
 * `fullUrl` is the URL Plivo called, with its query; `params` the POST body (ignored for GET).
 * Never throws: a missing header, nonce or token is simply invalid.
 */
export function validatePlivoSignature(
  authToken: string,
  method: string,
  fullUrl: string,
  params: PlivoParams,
  signatureHeader: unknown,
  nonceHeader: unknown,
): boolean {
  if (!authToken || typeof signatureHeader !== 'string' || signatureHeader === '' || typeof nonceHeader !== 'string' || nonceHeader === '') {
    return false;
  }
  const m = method.toUpperCase();
  if (m !== 'GET' && m !== 'POST') return false;
  // Surrounding blanks around the comma-separated signatures are not part of any signature.
  const signatures = signatureHeader.split(',').map((s) => s.trim()).filter(Boolean).join(',');
  try {
    return Boolean(validateV3Signature(m, fullUrl, nonceHeader, authToken, signatures, m === 'POST' ? cleanParams(params) : {}));
  } catch {
    return false;
  }
}

/** The parts of an HTTP request the check reads (structural, so no framework import here). */
export interface SignedHttpRequest {
  method: string;
  originalUrl: string;
  headers: IncomingHttpHeaders;
  /** Parsed form body; ignored for GET, where Plivo signs the URL alone. */
  body?: unknown;
}

/** Checks a request from Plivo (form POST or GET) against the public base URL. */
export function validatePlivoHttpRequest(req: SignedHttpRequest, opts: { authToken: string; publicBaseUrl: string }): boolean {
  const params = req.body && typeof req.body === 'object' ? (req.body as PlivoParams) : {};
  return validatePlivoSignature(
    opts.authToken,
    req.method,
    publicRequestUrl(opts.publicBaseUrl, req.originalUrl),
    params,
    req.headers[PLIVO_SIGNATURE_HEADER],
    req.headers[PLIVO_NONCE_HEADER],
  );
}
