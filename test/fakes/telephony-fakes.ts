/**
 * Every telephony vendor's fake behind one shape, for tests, the demo and the voice benchmark
 * that run "a phone call" whatever the vendor (`--provider`). Each vendor's fake speaks its real
 * protocol on 127.0.0.1; this file only adapts it. Adding a vendor's fake: one adapter function
 * and one line in FAKE_TELEPHONY.
 */
/** A provider name of the telephony registry. */
type TelephonyProvider = string;
import type { PhoneCaller } from './phone-caller';
import crypto from 'node:crypto';
import { DEFAULT_PLIVO_CONTENT_TYPE, parseExtraHeaders, plivoContentTypeFormat } from '../../src/providers/telephony/plivo/media-messages';
import { plivoStreamCredentials, plivoStreamExtraHeaders } from '../../src/providers/telephony/plivo/stream-auth';
import { connectExotelCaller } from './exotel-caller';
import { exotelNational, startFakeExotel } from './exotel-server';
import { connectPlivoCaller } from './plivo-caller';
import { plivoSignatureV3, startFakePlivo } from './plivo-server';
import { connectTwilioCaller } from './twilio-caller';
import { startFakeTwilio, twilioSignature, type FakeTwilio } from './twilio-server';
import { parseTwiml, parseXml } from './twilio-twiml';

export interface FakePhoneCall {
  /** The provider's id of the call. */
  providerCallId: string;
  /** Our call id, from the document that connected the stream (undefined when it did not connect). */
  callId?: string;
  /** The stream URL the platform handed to the vendor. */
  streamUrl?: string;
  /** The phone on the media stream, once connected. */
  caller?: PhoneCaller;
  /** The platform's answer to the vendor's webhook. */
  answer: { status: number; body: string };
  /** Resolves with the vendor's final status word once the call is over at the vendor. */
  ended: Promise<string>;
}

export interface FakeTelephony {
  readonly provider: TelephonyProvider;
  /** Environment the platform needs to reach the fake (e.g. TWILIO_API_BASE_URL). */
  readonly env: Record<string, string>;
  /** PUT /api/settings/telephony fields besides provider and public_base_url (credentials, number, cap). */
  settings(phoneNumber: string, maxConcurrent?: number): Record<string, unknown>;
  /**
   * A call to our number: the vendor's inbound webhook to `webhookUrl` (the endpoint's
   * inbound_webhook_url), followed as the vendor would. Resolves once its stream connected or
   * the call ended without one.
   */
  ringInbound(opts: { webhookUrl: string; from: string; to: string; statusCallbackUrl?: string }): Promise<FakePhoneCall>;
  /** The next phone to connect a stream (an outbound call being answered). */
  nextCaller(timeoutMs?: number): Promise<PhoneCaller>;
  /** Provider call ids the platform asked to hang up or cancel through the REST API, in order. */
  hangupRequests(): string[];
  /** The dials (transfers) the vendor ran for a call, in order: the destination and how its party answered. */
  dials(providerCallId: string): FakeDial[];
  /**
   * POSTs one webhook the way the vendor does, with neutral field names mapped to the vendor's
   * (an omitted providerCallId sends none). `auth`: `valid` (default), `forged` (signed with
   * another key), `none` (no signature).
   */
  postWebhook(url: string, fields: WebhookFields, auth?: 'valid' | 'forged' | 'none'): Promise<WebhookAnswer>;
  /** The stream connection in a connect document the platform answered, or null when it is something else. */
  readConnect(answer: WebhookAnswer): { streamUrl: string; callId: string; token: string } | null;
  /** A phone on the media stream, opened the way the vendor opens it for a connect document. */
  connectCaller(stream: { streamUrl: string; callId: string; token: string }): Promise<PhoneCaller>;
  stop(): Promise<void>;
}

export interface FakeDial {
  /** The number (as the vendor writes it) or SIP URI dialled. */
  to: string;
  /** How the dialled party answered (`answer`, `busy`, `no-answer`, …). */
  outcome: string;
}

export interface WebhookFields {
  providerCallId?: string;
  from?: string;
  to?: string;
  /** The vendor's own status word (status callbacks). */
  status?: string;
  /** More vendor fields, by the vendor's names. */
  extra?: Record<string, string>;
}

export interface WebhookAnswer {
  status: number;
  contentType: string;
  body: string;
}

export interface FakeTelephonyOptions {
  /** Keep received media messages in each caller's events (default true; false for benchmarks). */
  keepMediaEvents?: boolean;
}

async function twilioFake(opts: FakeTelephonyOptions): Promise<FakeTelephony> {
  const accountSid = `AC${'d3'.repeat(16)}`;
  const authToken = 'fake-twilio-auth-token-0123456789';
  const twilio: FakeTwilio = await startFakeTwilio({ accountSid, authToken, keepMediaEvents: opts.keepMediaEvents });
  return {
    provider: 'twilio',
    env: { TWILIO_API_BASE_URL: twilio.apiBaseUrl },
    settings: (phoneNumber, maxConcurrent = 10) => ({
      twilio_account_sid: accountSid,
      twilio_auth_token: authToken,
      twilio_phone_number: phoneNumber,
      twilio_max_concurrent: maxConcurrent,
    }),
    async ringInbound(o) {
      const record = await twilio.simulateInbound(o);
      const webhook = record.callbacks.find((c) => c.kind === 'inbound');
      const connect = record.verbs?.find((v) => v.verb === 'Connect');
      const stream = connect?.verb === 'Connect' ? connect.stream : undefined;
      return {
        providerCallId: record.sid,
        callId: stream?.parameters.call_id,
        streamUrl: stream?.url,
        caller: record.caller,
        answer: { status: webhook?.status ?? 0, body: webhook?.body ?? '' },
        ended: record.ended.then((r) => r.status),
      };
    },
    nextCaller: (timeoutMs) => twilio.nextCaller(timeoutMs),
    async postWebhook(url, f, auth = 'valid') {
      const params: Record<string, string> = { AccountSid: accountSid, Direction: 'inbound', ApiVersion: '2010-04-01', ...f.extra };
      if (f.providerCallId !== undefined) params.CallSid = f.providerCallId;
      if (f.from !== undefined) params.From = params.Caller = f.from;
      if (f.to !== undefined) params.To = params.Called = f.to;
      params.CallStatus = f.status ?? 'ringing';
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      if (auth !== 'none') headers['x-twilio-signature'] = twilioSignature(auth === 'valid' ? authToken : 'a-forged-auth-token', url, params);
      const res = await fetch(url, { method: 'POST', headers, body: new URLSearchParams(params).toString() });
      return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: await res.text() };
    },
    readConnect(answer) {
      if (answer.status !== 200 || !answer.contentType.includes('xml')) return null;
      const connect = parseTwiml(answer.body).find((v) => v.verb === 'Connect');
      if (connect?.verb !== 'Connect') return null;
      const { call_id: callId, token } = connect.stream.parameters;
      return callId && token ? { streamUrl: connect.stream.url, callId, token } : null;
    },
    connectCaller: ({ streamUrl, callId, token }) =>
      connectTwilioCaller({ url: streamUrl, accountSid, authToken, customParameters: { call_id: callId, token }, keepMediaEvents: opts.keepMediaEvents }),
    hangupRequests: () =>
      twilio.requests
        .filter((r) => r.method === 'POST' && /\/Calls\/[^/]+\.json$/.test(r.path) && ['completed', 'canceled'].includes(String(r.params.Status)))
        .map((r) => /\/Calls\/([^/]+)\.json$/.exec(r.path)![1]!),
    dials: (sid) => (twilio.call(sid)?.dials ?? []).map((d) => ({ to: d.to, outcome: d.outcome })),
    stop: () => twilio.stop(),
  };
}

async function plivoFake(opts: FakeTelephonyOptions): Promise<FakeTelephony> {
  const authId = 'MAFAKEPLIVOAUTHID000';
  const authToken = 'fake-plivo-auth-token-0123456789';
  const plivo = await startFakePlivo({ authId, authToken, keepMediaEvents: opts.keepMediaEvents });
  // Plivo sends E.164 numbers as digits without the +. A neutral number without a country code
  // (not E.164) is sent in Plivo's national form, with a trunk 0 — what Plivo's wire would carry.
  const digits = (n: string) => (n.startsWith('+') ? n.slice(1) : /^[1-9]\d*$/.test(n) ? `0${n}` : n);
  return {
    provider: 'plivo',
    env: { PLIVO_API_BASE_URL: plivo.apiBaseUrl },
    settings: (phoneNumber, maxConcurrent = 10) => ({
      plivo_auth_id: authId,
      plivo_auth_token: authToken,
      plivo_phone_number: phoneNumber,
      plivo_max_concurrent: maxConcurrent,
    }),
    async ringInbound(o) {
      const record = await plivo.simulateInbound({ answerUrl: o.webhookUrl, hangupUrl: o.statusCallbackUrl, from: o.from, to: o.to });
      const webhook = record.callbacks.find((c) => c.kind === 'answer');
      return {
        providerCallId: record.callUuid,
        callId: record.stream ? plivoStreamCredentials(parseExtraHeaders(record.stream.extraHeaders))?.callId : undefined,
        streamUrl: record.stream?.url,
        caller: record.caller,
        answer: { status: webhook?.status ?? 0, body: webhook?.body || (webhook?.error ?? record.errors.join('; ')) },
        ended: record.ended.then((r) => r.status),
      };
    },
    nextCaller: (timeoutMs) => plivo.nextCaller(timeoutMs),
    async postWebhook(url, f, auth = 'valid') {
      const params: Record<string, string> = { Direction: 'inbound', Event: 'StartApp', ...f.extra };
      if (f.providerCallId !== undefined) params.CallUUID = f.providerCallId;
      if (f.from !== undefined) params.From = digits(f.from);
      if (f.to !== undefined) params.To = digits(f.to);
      params.CallStatus = f.status ?? 'ringing';
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      if (auth !== 'none') {
        const nonce = String(crypto.randomInt(1e9, 1e10));
        headers['x-plivo-signature-v3'] = plivoSignatureV3(auth === 'valid' ? authToken : 'a-forged-auth-token', 'POST', url, params, nonce);
        headers['x-plivo-signature-v3-nonce'] = nonce;
      }
      const res = await fetch(url, { method: 'POST', headers, body: new URLSearchParams(params).toString() });
      return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: await res.text() };
    },
    readConnect(answer) {
      if (answer.status !== 200 || !answer.contentType.includes('xml')) return null;
      const stream = parseXml(answer.body).children.find((e) => e.name === 'Stream');
      if (!stream) return null;
      const credentials = plivoStreamCredentials(parseExtraHeaders(stream.attrs.extraHeaders ?? ''));
      return credentials ? { streamUrl: stream.text.trim(), ...credentials } : null;
    },
    connectCaller: ({ streamUrl, callId, token }) =>
      connectPlivoCaller({
        url: streamUrl,
        format: plivoContentTypeFormat(DEFAULT_PLIVO_CONTENT_TYPE),
        // An empty token (an attack case) is sent as an empty value; Plivo would pass it on as is.
        extraHeaders: token ? plivoStreamExtraHeaders(callId, token) : `callid=${callId.replace(/-/g, '')},token=`,
        keepMediaEvents: opts.keepMediaEvents,
      }),
    // DELETE …/Call/{CallUUID}/ hangs up, DELETE …/Request/{request_uuid}/ cancels (asked, whatever Plivo answered).
    hangupRequests: () =>
      plivo.requests
        .filter((r) => r.method === 'DELETE' && /\/(?:Call|Request)\/[^/]+\/$/.test(r.path))
        .map((r) => /\/(?:Call|Request)\/([^/]+)\/$/.exec(r.path)![1]!)
        .map((id) => plivo.call(id)?.callUuid ?? plivo.callByRequest(id)?.callUuid ?? id),
    dials: (uuid) => (plivo.call(uuid)?.dials ?? []).map((d) => ({ to: d.to, outcome: d.outcome })),
    stop: () => plivo.stop(),
  };
}

/** Our credentials in an Exotel stream URL, and the URL without them. */
function exotelStreamParts(url: string): { streamUrl: string; callId: string; token: string } | null {
  const u = new URL(url);
  const callId = u.searchParams.get('call_id');
  const token = u.searchParams.get('token');
  if (!callId || token === null) return null;
  u.searchParams.delete('call_id');
  u.searchParams.delete('token');
  return { streamUrl: u.toString(), callId, token };
}

function withExotelCredentials(streamUrl: string, callId: string, token: string): string {
  const u = new URL(streamUrl);
  u.searchParams.set('call_id', callId);
  u.searchParams.set('token', token);
  return u.toString();
}

async function exotelFake(opts: FakeTelephonyOptions): Promise<FakeTelephony> {
  const accountSid = 'exotelfake1';
  const apiKey = 'fake-exotel-api-key';
  const apiToken = 'fake-exotel-api-token-0123456789';
  const exotel = await startFakeExotel({ accountSid, apiKey, apiToken, keepMediaEvents: opts.keepMediaEvents });
  return {
    provider: 'exotel',
    env: { EXOTEL_API_BASE_URL: exotel.apiBaseUrl },
    settings: (phoneNumber, maxConcurrent = 10) => ({
      exotel_account_sid: accountSid,
      exotel_api_key: apiKey,
      exotel_api_token: apiToken,
      exotel_phone_number: phoneNumber,
      exotel_max_concurrent: maxConcurrent,
    }),
    async ringInbound(o) {
      const record = await exotel.simulateInbound({ appletUrl: o.webhookUrl, from: o.from, to: o.to, statusCallbackUrl: o.statusCallbackUrl });
      const applet = record.callbacks.find((c) => c.kind === 'applet');
      return {
        providerCallId: record.sid,
        callId: record.streamUrl ? (exotelStreamParts(record.streamUrl)?.callId ?? undefined) : undefined,
        streamUrl: record.streamUrl,
        caller: record.caller,
        answer: { status: applet?.status ?? 0, body: applet?.body || (applet?.error ?? record.errors.join('; ')) },
        ended: record.ended.then((r) => r.status),
      };
    },
    nextCaller: (timeoutMs) => exotel.nextCaller(timeoutMs),
    // Exotel signs nothing: `auth` changes nothing. The applet asks its URL with GET, status callbacks POST a form.
    async postWebhook(url, f) {
      const inbound = url.includes('/inbound/');
      const params: Record<string, string> = { Direction: inbound ? 'incoming' : 'outbound-api', ...f.extra };
      if (f.providerCallId !== undefined) params.CallSid = f.providerCallId;
      if (f.from !== undefined) params[inbound ? 'CallFrom' : 'From'] = exotelNational(f.from);
      if (f.to !== undefined) params[inbound ? 'CallTo' : 'To'] = exotelNational(f.to);
      if (!inbound) params.Status = f.status ?? 'completed';
      const res = inbound
        ? await fetch(`${url}?${new URLSearchParams(params)}`)
        : await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params).toString() });
      return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: await res.text() };
    },
    readConnect(answer) {
      if (answer.status !== 200 || !answer.contentType.includes('json')) return null;
      const url = (JSON.parse(answer.body) as { url?: unknown }).url;
      return typeof url === 'string' ? exotelStreamParts(url) : null;
    },
    connectCaller: ({ streamUrl, callId, token }) =>
      connectExotelCaller({ url: withExotelCredentials(streamUrl, callId, token), accountSid, keepMediaEvents: opts.keepMediaEvents }),
    hangupRequests: () =>
      exotel.requests
        .filter((r) => r.method === 'POST' && r.params.Status === 'completed')
        .map((r) => /\/Calls\/([^/]+?)(?:\.json)?$/.exec(r.path)?.[1])
        .filter((sid): sid is string => !!sid && sid !== 'connect'),
    // The Voicebot applet's stream cannot be handed over: Exotel never dials for us.
    dials: () => [],
    stop: () => exotel.stop(),
  };
}

export interface FakeTelephonyEntry {
  start(opts: FakeTelephonyOptions): Promise<FakeTelephony>;
  /** Known before starting, so tests can decide which cases apply (e.g. forged signatures). */
  signsWebhooks: boolean;
}

/** One line per vendor. */
export const FAKE_TELEPHONY: Partial<Record<TelephonyProvider, FakeTelephonyEntry>> = {
  twilio: { start: twilioFake, signsWebhooks: true },
  exotel: { start: exotelFake, signsWebhooks: false },
  plivo: { start: plivoFake, signsWebhooks: true },
};

export function fakeTelephonyProviders(filter: (entry: FakeTelephonyEntry) => boolean = () => true): TelephonyProvider[] {
  return (Object.keys(FAKE_TELEPHONY) as TelephonyProvider[]).filter((p) => filter(FAKE_TELEPHONY[p]!));
}

export async function startFakeTelephony(provider: string, opts: FakeTelephonyOptions = {}): Promise<FakeTelephony> {
  const entry = FAKE_TELEPHONY[provider as TelephonyProvider];
  if (!entry) throw new Error(`no fake for telephony provider "${provider}" (fakes: ${fakeTelephonyProviders().join(', ')})`);
  return entry.start(opts);
}
