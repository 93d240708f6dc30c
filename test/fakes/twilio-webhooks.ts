/**
 * How the fake Twilio calls the platform back: signed webhooks (status callbacks, TwiML fetches,
 * stream and dial callbacks), each recorded on the call with the platform's answer.
 */
import crypto from 'node:crypto';
import type { CallbackDelivery, CallState, Deferred } from './twilio-fake-types';

export const API_VERSION = '2010-04-01';
// Twilio gives a webhook 15 s to answer.
const WEBHOOK_TIMEOUT_MS = 15_000;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Waits `ms` or until `interrupt` settles, whichever is first, leaving no timer behind. */
export function sleepUnless(ms: number, interrupt: Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void interrupt.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
export const rfc2822 = (ms = Date.now()) => new Date(ms).toUTCString().replace('GMT', '+0000');

export function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Twilio's request signature: HMAC-SHA1(token, url + sorted name+value pairs), base64. */
export function twilioSignature(authToken: string, url: string, params: Record<string, string>): string {
  const data = Object.keys(params)
    .sort()
    .reduce((acc, key) => acc + key + params[key], url);
  return crypto.createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

export async function deliver(
  s: CallState,
  kind: CallbackDelivery['kind'],
  url: string,
  method: string,
  params: Record<string, string>,
  token = s.authToken,
): Promise<CallbackDelivery> {
  const get = method.toUpperCase() === 'GET';
  const target = get ? `${url}${url.includes('?') ? '&' : '?'}${new URLSearchParams(params)}` : url;
  const signature = twilioSignature(token, target, get ? {} : params);
  const delivery: CallbackDelivery = { kind, url: target, method: get ? 'GET' : 'POST', params, signature, atMs: Date.now(), status: 0, body: '' };
  s.record.callbacks.push(delivery);
  try {
    const res = await fetch(target, {
      method: delivery.method,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': signature,
        'user-agent': 'TwilioProxy/1.1',
        'i-twilio-idempotency-token': crypto.randomUUID(),
      },
      body: get ? undefined : new URLSearchParams(params).toString(),
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    });
    delivery.status = res.status;
    delivery.body = await res.text();
    if (res.status < 200 || res.status >= 300) s.record.errors.push(`11200 HTTP retrieval failure: ${kind} ${target} answered ${res.status}`);
  } catch (err) {
    delivery.error = (err as Error).message;
    s.record.errors.push(`11200 HTTP retrieval failure: ${kind} ${target}: ${delivery.error}`);
  }
  return delivery;
}

export const baseParams = (s: CallState, callStatus: string): Record<string, string> => ({
  AccountSid: s.record.accountSid,
  ApiVersion: API_VERSION,
  CallSid: s.record.sid,
  CallStatus: callStatus,
  Called: s.record.to,
  Caller: s.record.from,
  Direction: s.record.direction,
  From: s.record.from,
  To: s.record.to,
});

export async function statusCallback(s: CallState, event: string, callStatus: string, extra: Record<string, string> = {}) {
  if (!s.statusCallback || !s.record.statusCallbackEvents.includes(event)) return;
  await deliver(s, 'status', s.statusCallback, s.statusCallbackMethod, {
    ...baseParams(s, callStatus),
    CallbackSource: 'call-progress-events',
    SequenceNumber: String(s.sequence++),
    Timestamp: rfc2822(),
    ...extra,
  });
}

export async function fetchTwiml(s: CallState, url: string, method: string, params: Record<string, string>, kind: 'twiml' | 'inbound' | 'dial-action', token?: string) {
  const delivery = await deliver(s, kind, url, method, params, token);
  if (delivery.status < 200 || delivery.status >= 300) return null;
  return delivery.body;
}
