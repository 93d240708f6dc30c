/**
 * Places and ends calls through Plivo's Voice API with the official `plivo` SDK: its request
 * layer (JSON body, Basic auth, error classes) and its Call resource (parameter names, the
 * `/Call/` and `/Request/` paths) are what run, in production and against the local fake
 * (test/fakes/plivo-server.ts).
 *
 * The SDK sends voice requests to a hard-coded https://api.plivo.com (with two retries on 5xx);
 * to reach another base URL (config PLIVO_API_BASE_URL) the Call resource is given the SDK's own
 * request function built for that URL — the SDK's extension point is the request function its
 * resources take.
 */
import { Client } from 'plivo';
import { CallInterface } from 'plivo/dist/resources/call';
import { Axios } from 'plivo/dist/rest/axios';
import { camelCaseRequestWrapper } from 'plivo/dist/rest/utils';
import { TelephonyProviderError, type ProviderCallRef, type ProviderErrorKind } from '../types';

export interface PlivoCredentials {
  authId: string;
  authToken: string;
  /** Replaces https://api.plivo.com (config PLIVO_API_BASE_URL); unset = the real API. */
  apiBaseUrl?: string;
}

export interface CreatePlivoCallRequest {
  to: string;
  from: string;
  /** Fetched (POST, signed) when the callee answers; must answer Plivo XML. */
  answerUrl: string;
  /** Receives the final status (POST, signed) when the call ends, answered or not. */
  hangupUrl: string;
  /** Receives `ringing` (POST, signed). */
  ringUrl: string;
  /** Seconds to ring before Plivo gives up with `timeout` (Plivo default 60). */
  ringTimeoutSecs: number;
  /** Plivo hangs up after this many seconds of call (Plivo default 4 hours). */
  timeLimitSecs?: number;
  /** Answering-machine detection, asynchronous: its result is posted (signed) to this URL. */
  machineDetectionUrl?: string;
  /**
   * Answering-machine detection, synchronous (no URL): Plivo processes no XML until it knows, then
   * requests the answer URL with `Machine`.
   */
  syncMachineDetection?: boolean;
}

// The SDK's voice default is 5 s; an outbound-call API request may take longer under load, but
// should fail sooner than a client gives up.
const REQUEST_TIMEOUT_MS = 15_000;

type RequestFn = (method: string, action: string, params?: Record<string, unknown>) => Promise<{ response: unknown; body: unknown }>;

interface SdkCalls {
  create(from: string, to: string, answerUrl: string, params?: Record<string, unknown>): Promise<{ requestUuid?: string; message?: string }>;
  hangup(callUuid: string): Promise<unknown>;
  cancel(requestUuid: string): Promise<unknown>;
  transfer(callUuid: string, params: { legs: 'aleg'; alegUrl: string; alegMethod: 'POST' }): Promise<unknown>;
}

/** The SDK's request function, aimed at `apiBaseUrl`. */
function requestFor(creds: PlivoCredentials & { apiBaseUrl: string }): RequestFn {
  const base = creds.apiBaseUrl.replace(/\/+$/, '');
  const send = Axios({
    authId: creds.authId,
    authToken: creds.authToken,
    url: `${base}/v1/Account/${encodeURIComponent(creds.authId)}`,
    userAgent: 'plivo-node (voice-agent-platform)',
    timeout: REQUEST_TIMEOUT_MS,
  }) as RequestFn;
  // `is_voice_request` is what sends the SDK to its fixed voice host; without it `url` is used.
  return camelCaseRequestWrapper((method: string, action: string, params?: Record<string, unknown>) => {
    if (params) delete params.is_voice_request;
    return send(method, action, params);
  }) as RequestFn;
}

// One SDK client per credential set: each holds a keep-alive agent worth reusing across calls.
const clients = new Map<string, SdkCalls>();
const MAX_CACHED_CLIENTS = 32;

export function callsFor(creds: PlivoCredentials): SdkCalls {
  const key = `${creds.authId}\n${creds.authToken}\n${creds.apiBaseUrl ?? ''}`;
  let calls = clients.get(key);
  if (!calls) {
    calls = creds.apiBaseUrl
      ? (new CallInterface(requestFor({ ...creds, apiBaseUrl: creds.apiBaseUrl })) as unknown as SdkCalls)
      : (new Client(creds.authId, creds.authToken, { timeout: REQUEST_TIMEOUT_MS }).calls as unknown as SdkCalls);
    if (clients.size >= MAX_CACHED_CLIENTS) clients.delete(clients.keys().next().value as string);
    clients.set(key, calls);
  }
  return calls;
}

/**
 * Creates an outbound call (POST /v1/Account/{auth_id}/Call/). Plivo answers with a
 * `request_uuid`; the call's own `CallUUID` arrives with the first callback (ring or answer URL).
 */
export async function createPlivoCall(creds: PlivoCredentials, req: CreatePlivoCallRequest): Promise<ProviderCallRef> {
  const calls = callsFor(creds);
  try {
    const res = await calls.create(req.from, req.to, req.answerUrl, {
      answerMethod: 'POST',
      hangupUrl: req.hangupUrl,
      hangupMethod: 'POST',
      ringUrl: req.ringUrl,
      ringMethod: 'POST',
      ringTimeout: req.ringTimeoutSecs,
      ...(req.timeLimitSecs !== undefined ? { timeLimit: req.timeLimitSecs } : {}),
      // machine_detection=true (not hangup: the platform decides), asynchronous with a URL.
      ...(req.machineDetectionUrl ? { machineDetection: 'true', machineDetectionUrl: req.machineDetectionUrl, machineDetectionMethod: 'POST' } : {}),
      ...(req.syncMachineDetection && !req.machineDetectionUrl ? { machineDetection: 'true' } : {}),
    });
    if (typeof res?.requestUuid !== 'string' || res.requestUuid === '') {
      throw new TelephonyProviderError('plivo', 'unavailable', 'Plivo answered without a request_uuid');
    }
    return { sid: res.requestUuid, status: res.message ?? 'call fired' };
  } catch (err) {
    throw toProviderError(err);
  }
}

/**
 * Ends a call whatever its stage: `DELETE /Call/{uuid}/` hangs up a live call; while it is still
 * queued or ringing Plivo only knows its request (`DELETE /Request/{request_uuid}/`). The id we
 * hold is the CallUUID once a callback brought it, the request_uuid before; so a 404 on one is
 * followed by the other, and 404 on both means the call has already ended — success.
 */
export async function hangupPlivoCall(creds: PlivoCredentials, id: string): Promise<void> {
  const calls = callsFor(creds);
  for (const attempt of [() => calls.hangup(id), () => calls.cancel(id)]) {
    try {
      await attempt();
      return;
    } catch (err) {
      const mapped = toProviderError(err);
      if (mapped.kind !== 'not_found') throw mapped;
    }
  }
}

/** Turns whatever the SDK threw (PlivoRestError, a stack string for network errors) into a TelephonyProviderError. */
export function toProviderError(err: unknown): TelephonyProviderError {
  if (err instanceof TelephonyProviderError) return err;
  const e = err as { status?: unknown; message?: unknown; apiID?: unknown } | null;
  if (e && typeof e === 'object' && typeof e.status === 'number') {
    const status = e.status;
    let kind: ProviderErrorKind = 'rejected';
    if (status === 401) kind = 'auth';
    else if (status === 404) kind = 'not_found';
    else if (status === 429 || status >= 500) kind = 'unavailable';
    const said = typeof e.message === 'string' && e.message !== '' ? e.message : `Plivo answered HTTP ${status}`;
    const message = kind === 'auth' ? `Plivo rejected the credentials: the Auth ID or Auth Token is incorrect (${said})` : said;
    const apiId = typeof e.apiID === 'string' && e.apiID ? e.apiID : undefined;
    return new TelephonyProviderError('plivo', kind, message, null, status, apiId);
  }
  // The SDK rejects network failures with the error's stack as a string; its first line says it.
  const text = typeof err === 'string' ? err : err instanceof Error ? err.message : String(err);
  const reason = text.split('\n')[0].replace(/^(Axios)?Error:\s*/, '');
  return new TelephonyProviderError('plivo', 'unavailable', `Plivo could not be reached: ${reason}`);
}
