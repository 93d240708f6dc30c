/**
 * What the fake Plivo (./plivo-server.ts) checks and signs as Plivo does: the X-Plivo-Signature-V3
 * of its callbacks and the `<Stream>` element of the XML it is answered.
 */
import crypto from 'node:crypto';
import { isPlivoContentType } from '../../src/providers/telephony/plivo/media-messages';
import type { CallState, FakeStream } from './plivo-fake-types';
import type { XmlElement } from './twilio-twiml';

const EXTRA_HEADERS = /^[A-Za-z0-9]+=[A-Za-z0-9]*(?:,[A-Za-z0-9]+=[A-Za-z0-9]*)*$/;

/**
 * Plivo's V3 signature, written from the documented algorithm (independently of the SDK the
 * platform validates with): base64(HMAC-SHA256(token, url[?sorted query][.]sorted key+value "." nonce)).
 */
export function plivoSignatureV3(authToken: string, method: 'GET' | 'POST', url: string, params: Record<string, string>, nonce: string): string {
  const u = new URL(url);
  const query = [...u.searchParams.entries()].map(([k, v]) => `${k}=${v}`).sort();
  let base = `${u.protocol}//${u.host}${u.pathname}`;
  if (method === 'GET') {
    for (const [k, v] of Object.entries(params)) query.push(`${k}=${v}`);
    query.sort();
    if (query.length) base += `?${query.join('&')}`;
  } else {
    const body = Object.keys(params).sort().map((k) => `${k}${params[k]}`).join('');
    if (query.length || body) base += `?${query.join('&')}${query.length && body ? '.' : ''}${body}`;
  }
  return crypto.createHmac('sha256', authToken).update(`${base}.${nonce}`, 'utf8').digest('base64');
}

/** A `<Stream>` element checked as Plivo checks it; null (with the reason in `errors`) when Plivo would refuse it. */
export function readStreamElement(el: XmlElement, errors: string[]): FakeStream | null {
  const a = el.attrs;
  const url = el.text.trim();
  if (!/^wss?:\/\/\S+$/i.test(url)) {
    errors.push(`Stream: not a WebSocket URL: ${JSON.stringify(url)}`);
    return null;
  }
  const contentType = a.contentType ?? 'audio/x-l16;rate=8000';
  if (!isPlivoContentType(contentType)) {
    errors.push(`Stream: unsupported contentType ${contentType}`);
    return null;
  }
  const extraHeaders = a.extraHeaders ?? '';
  if (extraHeaders && (!EXTRA_HEADERS.test(extraHeaders) || Buffer.byteLength(extraHeaders) > 512)) {
    errors.push(`Stream: invalid extraHeaders ${JSON.stringify(extraHeaders)} (only [A-Za-z0-9] pairs, 512 bytes)`);
    return null;
  }
  for (const [k, v] of Object.entries(a)) {
    if (!['bidirectional', 'audioTrack', 'streamTimeout', 'statusCallbackUrl', 'statusCallbackMethod', 'contentType', 'extraHeaders', 'keepCallAlive', 'noiseCancellation', 'noiseCancellationLevel'].includes(k)) {
      errors.push(`Stream: unknown attribute ${k}="${v}"`);
      return null;
    }
  }
  return {
    url,
    contentType,
    extraHeaders,
    bidirectional: a.bidirectional === 'true',
    keepCallAlive: a.keepCallAlive === 'true',
    statusCallbackUrl: a.statusCallbackUrl,
  };
}
const E164_DIGITS = /^\+?[1-9]\d{6,14}$/;

export interface CreateCallRequest {
  from: string;
  to: string;
  answerUrl: string;
  ringUrl?: string;
  hangupUrl?: string;
  ringTimeout: number;
  timeLimit?: number;
}

/** A request body as Plivo reads it: {} when empty, the object when JSON, else the text itself (a 400). */
export function jsonBody(text: string): Record<string, unknown> | string {
  if (!text) return {};
  try {
    const parsed = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return text;
  }
}

/** The JSON body of `POST /Call/`, checked as Plivo checks it: the request, or Plivo's error text. */
export function readCreateCall(body: Record<string, unknown>): CreateCallRequest | { error: string } {
  const str = (k: string) => (typeof body[k] === 'string' ? (body[k] as string) : undefined);
  const from = str('from');
  const to = str('to');
  const answerUrl = str('answer_url');
  if (!from) return { error: 'from parameter is required' };
  if (!to) return { error: 'to parameter is required' };
  if (!answerUrl) return { error: 'answer_url parameter is required' };
  if (!E164_DIGITS.test(to)) return { error: `invalid destination number ${to}` };
  if (!E164_DIGITS.test(from)) return { error: `invalid from number ${from}` };
  for (const k of ['answer_url', 'ring_url', 'hangup_url']) {
    const v = str(k);
    if (v !== undefined && !/^https?:\/\/\S+$/.test(v)) return { error: `${k} is not a valid URL` };
  }
  for (const k of ['answer_method', 'ring_method', 'hangup_method']) {
    const v = str(k);
    if (v !== undefined && v !== 'GET' && v !== 'POST') return { error: `${k} must be GET or POST` };
    if (v === 'GET') return { error: `${k} GET is not simulated by the fake` };
  }
  const ringTimeout = body.ring_timeout === undefined ? 60 : Number(body.ring_timeout);
  if (!Number.isInteger(ringTimeout) || ringTimeout < 1 || ringTimeout > 120) return { error: 'ring_timeout must be an integer between 1 and 120' };
  const timeLimit = body.time_limit === undefined ? undefined : Number(body.time_limit);
  if (timeLimit !== undefined && (!Number.isInteger(timeLimit) || timeLimit < 1)) return { error: 'time_limit must be a positive integer' };
  return { from, to, answerUrl, ringUrl: str('ring_url'), hangupUrl: str('hangup_url'), ringTimeout, timeLimit };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function sleepUnless(ms: number, interrupt: Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void interrupt.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
}
export function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** The parameters every Plivo call callback carries. */
export function baseParams(s: CallState, status: string, event: string): Record<string, string> {
  const c = s.record;
  return {
    CallUUID: c.callUuid,
    ...(c.requestUuid ? { RequestUUID: c.requestUuid } : {}),
    From: c.from.replace(/^\+/, ''),
    To: c.to.replace(/^\+/, ''),
    CallStatus: status,
    Direction: c.direction,
    Event: event,
    CallerName: c.direction === 'inbound' ? `+${c.from.replace(/^\+/, '')}` : '',
    BillRate: '0.00850',
    STIRVerification: 'Not Applicable',
  };
}
