/**
 * Exotel's Voice v1 REST API with `got`: HTTP Basic (API key : API token) on the account's
 * regional host (`exotel_api_base`: api.exotel.com for Singapore, api.in.exotel.com for Mumbai).
 *
 * - Place a call: `POST /v1/Accounts/{sid}/Calls/connect.json` with the AgentStream parameters —
 *   `from` (the number to dial), `callerid` (our ExoPhone), `streamurl` + `streamtype=bidirectional`
 *   (the answered call is connected straight to our stream: no App Bazaar flow needed),
 *   `statuscallback` with `statuscallbackevents[]` `answered` and `terminal`, `timelimit`,
 *   `customfield` (our call id). Exotel answers `{"call": {"sid", "status", …}}` (older accounts:
 *   `{"Call": {"Sid", "Status"}}`); errors come as `{"RestException": {"Status", "Message", "Code"}}`.
 * - Hang up: `POST /v1/Accounts/{sid}/Calls/{CallSid}.json` with `Status=completed`. Exotel's v1
 *   reference does not document ending a live call; this is the Twilio-compatible form its v1 API
 *   descends from. A 404 (call over, or the request unknown) counts as hung up, and closing the
 *   stream ends the Voicebot applet in any case (README, Exotel).
 *
 * The stored base URL is sent our credentials, so only Exotel's own HTTPS hosts are accepted
 * (exotelApiBase); EXOTEL_API_BASE_URL (operator config, the fake in tests) overrides it.
 */
import got, { HTTPError, RequestError, type Got } from 'got';
import { TelephonyProviderError, type ProviderCallRef, type ProviderErrorKind } from '../types';

export interface ExotelCredentials {
  accountSid: string;
  apiKey: string;
  apiToken: string;
  /** https://api.exotel.com, https://api.in.exotel.com, or EXOTEL_API_BASE_URL. */
  apiBaseUrl: string;
  /** The Voicebot stream's sample rate (EXOTEL_SAMPLE_RATE). */
  sampleRate: number;
}

export interface CreateExotelCallRequest {
  /** The number to dial, E.164. */
  to: string;
  /** Our ExoPhone, E.164. */
  callerId: string;
  /** wss:// URL of the stream, with our call id and token. */
  streamUrl: string;
  statusCallbackUrl: string;
  /** Our call id, kept by Exotel as the call's CustomField. */
  customField: string;
  timeLimitSecs?: number;
}

export const DEFAULT_EXOTEL_API_BASE = 'https://api.exotel.com';
const EXOTEL_HOST = /^(?:[a-z0-9-]+\.)+exotel\.(?:com|in)$/;
const REQUEST_TIMEOUT_MS = 15_000;
// Exotel's own bound on a call's length (4 hours).
const MAX_TIME_LIMIT_SECS = 14_400;

/**
 * The API base of the stored `exotel_api_base`: an Exotel HTTPS host, written as Exotel's
 * documents do (`api.in.exotel.com`, `@api.in.exotel.com`) or as a URL. null when it is not one —
 * the platform never sends the API token to a host a settings change pointed elsewhere.
 */
export function exotelApiBase(value: string | null | undefined): string | null {
  if (!value) return DEFAULT_EXOTEL_API_BASE;
  const text = value.trim().replace(/^@/, '');
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(text) ? text : `https://${text}`);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' || url.username || url.password || url.port || url.search || url.hash) return null;
  if (url.pathname !== '/' && url.pathname !== '') return null;
  return EXOTEL_HOST.test(url.hostname) ? `https://${url.hostname}` : null;
}

const clients = new Map<string, Got>();

function client(creds: ExotelCredentials): Got {
  const key = `${creds.apiBaseUrl}\n${creds.apiKey}\n${creds.apiToken}`;
  let c = clients.get(key);
  if (!c) {
    c = got.extend({
      prefixUrl: `${creds.apiBaseUrl.replace(/\/+$/, '')}/v1/Accounts/${encodeURIComponent(creds.accountSid)}/`,
      username: creds.apiKey,
      password: creds.apiToken,
      headers: { accept: 'application/json', 'user-agent': 'voice-agent-platform' },
      timeout: { request: REQUEST_TIMEOUT_MS },
      // Placing a call is not idempotent; the hang-up activity retries on its own schedule.
      retry: { limit: 0 },
      followRedirect: false,
      responseType: 'text',
    });
    if (clients.size >= 32) clients.delete(clients.keys().next().value as string);
    clients.set(key, c);
  }
  return c;
}

function json(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** Places an outbound call connected to our stream once answered. */
export async function createExotelCall(creds: ExotelCredentials, req: CreateExotelCallRequest): Promise<ProviderCallRef> {
  const form = new URLSearchParams({
    from: req.to,
    callerid: req.callerId,
    streamurl: req.streamUrl,
    streamtype: 'bidirectional',
    statuscallback: req.statusCallbackUrl,
    customfield: req.customField,
  });
  form.append('statuscallbackevents[]', 'answered');
  form.append('statuscallbackevents[]', 'terminal');
  if (req.timeLimitSecs) form.set('timelimit', String(Math.min(req.timeLimitSecs, MAX_TIME_LIMIT_SECS)));
  let body: Record<string, unknown>;
  try {
    const res = await client(creds).post('Calls/connect.json', { body: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    body = json(res.body);
  } catch (err) {
    throw toProviderError(err);
  }
  const call = (body.call ?? body.Call) as Record<string, unknown> | undefined;
  const sid = call?.sid ?? call?.Sid;
  if (typeof sid !== 'string' || sid === '') throw new TelephonyProviderError('exotel', 'unavailable', 'Exotel answered without a call sid');
  const status = call?.status ?? call?.Status;
  return { sid, status: typeof status === 'string' ? status : 'queued' };
}

/** Ends a call; one that is already over (404) is success. */
export async function hangupExotelCall(creds: ExotelCredentials, callSid: string): Promise<void> {
  try {
    await client(creds).post(`Calls/${encodeURIComponent(callSid)}.json`, {
      body: new URLSearchParams({ Status: 'completed' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
  } catch (err) {
    const mapped = toProviderError(err);
    if (mapped.kind !== 'not_found') throw mapped;
  }
}

/** Exotel's error (RestException) or a network failure as a TelephonyProviderError. */
export function toProviderError(err: unknown): TelephonyProviderError {
  if (err instanceof TelephonyProviderError) return err;
  if (err instanceof HTTPError) {
    const status = err.response.statusCode;
    const body = json(String(err.response.body ?? ''));
    const ex = (body.RestException ?? body.restexception ?? body) as Record<string, unknown>;
    const said = typeof ex.Message === 'string' && ex.Message ? ex.Message : typeof ex.message === 'string' && ex.message ? ex.message : `Exotel answered HTTP ${status}`;
    const code = typeof ex.Code === 'number' || typeof ex.Code === 'string' ? ex.Code : null;
    let kind: ProviderErrorKind = 'rejected';
    // 403 is a refusal of this request (a number not allowed, DND…), not of the credentials.
    if (status === 401) kind = 'auth';
    else if (status === 404) kind = 'not_found';
    else if (status === 429 || status >= 500) kind = 'unavailable';
    const message = kind === 'auth' ? `Exotel rejected the credentials: the API key or API token is incorrect (${said})` : said;
    return new TelephonyProviderError('exotel', kind, message, code, status);
  }
  const reason = err instanceof RequestError ? `${err.code ?? 'request error'}: ${err.message}` : (err as Error)?.message ?? String(err);
  return new TelephonyProviderError('exotel', 'unavailable', `Exotel could not be reached: ${reason}`);
}
