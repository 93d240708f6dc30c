/**
 * Reading and validating the fields of a provider's webhook. A request that passed the vendor's
 * authentication can still be malformed (a replay without its call id, a forged field): these
 * helpers turn that into a WebhookInputError (400 / 422 `{detail}`), never a 500.
 */
import { WebhookInputError, type WebhookRequest } from './types';

export const E164 = /^\+[1-9]\d{6,14}$/;
/** Provider call ids (Twilio CA…, Plivo UUIDs, Exotel sids): printable, no spaces, bounded. */
const CALL_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const MAX_FIELD_CHARS = 256;

/** A webhook's parameters: the query string of a GET, the (form or JSON) body of a POST. */
export function webhookParams(req: WebhookRequest): Record<string, unknown> {
  return req.method.toUpperCase() === 'GET' ? req.query : req.body;
}

/** A form or JSON field as one string (a repeated form field: its last value); undefined when absent. */
export function field(body: Record<string, unknown>, name: string): string | undefined {
  let v = body[name];
  if (Array.isArray(v)) v = v[v.length - 1];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  return String(v);
}

/** The provider's call id: required (400 without one), bounded and printable. */
export function requireCallId(body: Record<string, unknown>, name: string): string {
  const v = field(body, name);
  if (v === undefined || v === '') throw new WebhookInputError(400, `${name} is missing: not a call webhook`);
  if (!CALL_ID.test(v)) throw new WebhookInputError(422, `${name}: not a valid call id`);
  return v;
}

/**
 * A phone number field: E.164, or one of `alsoAllowed` (a vendor's words for a hidden or
 * non-phone caller, e.g. Twilio's `anonymous`, `client:alice`). 422 otherwise.
 */
export function phoneField(body: Record<string, unknown>, name: string, opts: { required: boolean; alsoAllowed?: RegExp }): string | undefined {
  const v = field(body, name);
  if (v === undefined || v === '') {
    if (opts.required) throw new WebhookInputError(422, `${name} is missing`);
    return undefined;
  }
  if (v.length > 64 || !(E164.test(v) || opts.alsoAllowed?.test(v))) {
    throw new WebhookInputError(422, `${name}: must be an E.164 number such as +14155550123`);
  }
  return v;
}

/** A free-text field, bounded (422 when longer); undefined when absent. */
export function textField(body: Record<string, unknown>, name: string, maxChars = MAX_FIELD_CHARS): string | undefined {
  const v = field(body, name);
  if (v === undefined) return undefined;
  if (v.length > maxChars) throw new WebhookInputError(422, `${name}: longer than ${maxChars} characters`);
  return v;
}

/** A non-negative integer field (durations, sequence numbers); undefined when absent or malformed. */
export function countField(body: Record<string, unknown>, name: string): number | undefined {
  const v = field(body, name);
  return v !== undefined && /^\d{1,9}$/.test(v) ? Number(v) : undefined;
}
