/**
 * Places and ends calls through Twilio's REST API with the official `twilio` SDK, so the SDK's own
 * form encoding, Basic auth and error parsing are what run — in production and against the local
 * fake (test/fakes/twilio-server.ts), which is reached by pointing `apiBaseUrl` at it.
 */
import twilio from 'twilio';
import { TelephonyProviderError, type ProviderCallRef, type ProviderErrorKind } from '../types';

export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
  /** Replaces https://api.twilio.com (config TWILIO_API_BASE_URL); unset = the real API. */
  apiBaseUrl?: string;
}

export type TwilioStatusCallbackEvent = 'initiated' | 'ringing' | 'answered' | 'completed';

export interface CreateTwilioCallRequest {
  to: string;
  from: string;
  /** URL Twilio fetches TwiML from (POST) when the callee answers. One of twimlUrl / twiml. */
  twimlUrl?: string;
  /** Inline TwiML instead of a URL (Twilio limit: 4000 characters). */
  twiml?: string;
  statusCallbackUrl: string;
  statusCallbackEvents?: TwilioStatusCallbackEvent[];
  /** Seconds to ring before Twilio gives up with `no-answer` (Twilio default 60). */
  timeoutSecs: number;
  /** Twilio hangs up after this many seconds of call (Twilio default 4 hours). */
  timeLimitSecs?: number;
  /**
   * Asynchronous answering-machine detection (AsyncAmd=true): `Enable` reports as soon as it knows
   * (machine_start), `DetectMessageEnd` waits for the greeting's end (machine_end_beep, …).
   */
  machineDetection?: { mode: 'Enable' | 'DetectMessageEnd'; callbackUrl: string };
  /** Synchronous detection (a warm transfer's human leg): the TwiML fetch waits for it and carries `AnsweredBy`. */
  syncMachineDetection?: boolean;
}

export const DEFAULT_STATUS_CALLBACK_EVENTS: TwilioStatusCallbackEvent[] = ['initiated', 'ringing', 'answered', 'completed'];

// The SDK default is 30 s; an outbound-call API request should fail sooner than a client gives up.
const REQUEST_TIMEOUT_MS = 15_000;
const TWILIO_HOST = /(^|\.)twilio\.com$/i;

type RequestClientInstance = InstanceType<typeof twilio.RequestClient>;
type RequestOptions = Parameters<RequestClientInstance['request']>[0];

/**
 * The SDK's own HTTP client with one change: requests for *.twilio.com go to `baseUrl` instead.
 * Passing an `httpClient` is the SDK's extension point for custom transports.
 */
class BaseUrlRequestClient extends twilio.RequestClient {
  private readonly base: URL;
  constructor(baseUrl: string) {
    super({ timeout: REQUEST_TIMEOUT_MS });
    this.base = new URL(baseUrl);
  }
  override request<TData>(opts: RequestOptions) {
    const target = new URL(opts.uri);
    if (TWILIO_HOST.test(target.hostname)) {
      const prefix = this.base.pathname.replace(/\/+$/, '');
      opts = { ...opts, uri: `${this.base.origin}${prefix}${target.pathname}${target.search}` };
    }
    return super.request<TData>(opts as RequestOptions & { data?: TData });
  }
}

// One SDK client per credential set: each holds a keep-alive agent worth reusing across calls.
const clients = new Map<string, twilio.Twilio>();
const MAX_CACHED_CLIENTS = 32;

export function twilioClient(creds: TwilioCredentials): twilio.Twilio {
  const key = `${creds.accountSid}\n${creds.authToken}\n${creds.apiBaseUrl ?? ''}`;
  let client = clients.get(key);
  if (!client) {
    const httpClient = creds.apiBaseUrl
      ? new BaseUrlRequestClient(creds.apiBaseUrl)
      : new twilio.RequestClient({ timeout: REQUEST_TIMEOUT_MS });
    try {
      client = twilio(creds.accountSid, creds.authToken, { httpClient });
    } catch (err) {
      // The SDK refuses an AccountSid not starting with "AC" before any request is made.
      throw new TelephonyProviderError('twilio', 'auth', `Twilio credentials are invalid: ${(err as Error).message}`);
    }
    if (clients.size >= MAX_CACHED_CLIENTS) clients.delete(clients.keys().next().value as string);
    clients.set(key, client);
  }
  return client;
}

/** Creates an outbound call (POST /2010-04-01/Accounts/{Sid}/Calls.json). */
export async function createTwilioCall(creds: TwilioCredentials, req: CreateTwilioCallRequest): Promise<ProviderCallRef> {
  if (!req.twimlUrl === !req.twiml) throw new Error('createTwilioCall: pass exactly one of twimlUrl, twiml');
  const client = twilioClient(creds);
  try {
    const call = await client.calls.create({
      to: req.to,
      from: req.from,
      ...(req.twimlUrl ? { url: req.twimlUrl, method: 'POST' } : { twiml: req.twiml }),
      statusCallback: req.statusCallbackUrl,
      statusCallbackMethod: 'POST',
      statusCallbackEvent: req.statusCallbackEvents ?? DEFAULT_STATUS_CALLBACK_EVENTS,
      timeout: req.timeoutSecs,
      ...(req.timeLimitSecs !== undefined ? { timeLimit: req.timeLimitSecs } : {}),
      ...(req.machineDetection
        ? {
            machineDetection: req.machineDetection.mode,
            asyncAmd: 'true',
            asyncAmdStatusCallback: req.machineDetection.callbackUrl,
            asyncAmdStatusCallbackMethod: 'POST',
          }
        : req.syncMachineDetection
          ? { machineDetection: 'Enable' }
          : {}),
    });
    return { sid: call.sid, status: call.status };
  } catch (err) {
    throw toProviderError(err);
  }
}

// Twilio answers 21220 when the call is no longer active: for a hang-up that is success.
const CALL_NOT_ACTIVE = 21220;

/** Hangs up a live call, or cancels it while it is still queued/ringing (Status=completed). */
export async function hangupTwilioCall(creds: TwilioCredentials, callSid: string): Promise<ProviderCallRef> {
  const client = twilioClient(creds);
  try {
    const call = await client.calls(callSid).update({ status: 'completed' });
    return { sid: call.sid, status: call.status };
  } catch (err) {
    const mapped = toProviderError(err);
    if (mapped.code === CALL_NOT_ACTIVE) return { sid: callSid, status: 'completed' };
    throw mapped;
  }
}

/** Twilio error codes meaning the credentials are wrong or lack permission. */
const AUTH_CODES = new Set([20003, 20005, 20006, 20008]);

/** Turns whatever the SDK threw (RestException, network error) into a TelephonyProviderError. */
export function toProviderError(err: unknown): TelephonyProviderError {
  if (err instanceof TelephonyProviderError) return err;
  if (err instanceof twilio.RestException) {
    const code = typeof err.code === 'number' ? err.code : null;
    const status = err.status;
    let kind: ProviderErrorKind = 'rejected';
    if (status === 401 || status === 403 || (code !== null && AUTH_CODES.has(code))) kind = 'auth';
    else if (status === 404) kind = 'not_found';
    else if (status === 429 || status >= 500) kind = 'unavailable';
    // Twilio's 401 body says only "Authenticate"; say what that means.
    const message =
      kind === 'auth' && (!err.message || err.message === 'Authenticate')
        ? 'Twilio rejected the credentials: the Account SID or Auth Token is incorrect'
        : err.message || `Twilio answered HTTP ${status}`;
    return new TelephonyProviderError('twilio', kind, message, code, status, err.moreInfo);
  }
  const e = err as { code?: string; message?: string };
  const reason = e?.code ?? e?.message ?? String(err);
  return new TelephonyProviderError('twilio', 'unavailable', `Twilio could not be reached: ${reason}`);
}
