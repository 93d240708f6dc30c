/**
 * A fake Twilio on 127.0.0.1 speaking the real wire protocol, so the platform's Twilio adapter
 * (the official SDK) and its webhooks and media gateway can be exercised offline:
 *
 * - REST: `POST /2010-04-01/Accounts/{Sid}/Calls.json` (form-encoded, HTTP Basic), `GET`/`POST`
 *   `…/Calls/{CallSid}.json` (fetch; `Status=completed|canceled` hangs up). Errors use Twilio's
 *   JSON shape and codes (20003 bad credentials, 21201/21213 missing To/From, 21211 invalid To…).
 * - Then it plays the call like Twilio: signed status callbacks (initiated, ringing, answered,
 *   completed — those subscribed with StatusCallbackEvent), a signed TwiML fetch from `Url` once
 *   answered, and for `<Connect><Stream>` a simulated caller (./twilio-caller) on the stream URL.
 *   When either side closes the stream the call completes with its CallDuration.
 * - Inbound: `simulateInbound` posts the voice webhook like Twilio and follows its TwiML.
 *
 * Outcomes are scriptable per destination: answer (default), busy, no-answer, failed.
 * - Transfers: `POST …/Calls/{CallSid}.json` with `Twiml` redirects the live call like Twilio —
 *   the current stream gets `stop` and closes, the new TwiML runs. `<Dial>` is recorded in the
 *   call's `dials`, plays the dialled party per `setDialOutcome` (answered: the `<Number>`/`<Sip>`
 *   status callback with `answered`, then the conversation, then the action URL with
 *   `DialCallStatus=completed`; busy / no-answer / failed: the action URL with that status) and
 *   executes the TwiML the action URL answers (e.g. a new `<Connect><Stream>`).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectTwilioCaller, newSid, type TwilioCaller } from './twilio-caller';
import { parseTwiml, type TwimlDial, type TwimlStream, type TwimlVerb } from './twilio-twiml';
import { amdRequestProblem, simulateAmd, type AmdScript } from './twilio-amd';

export type CallOutcome = 'answer' | 'busy' | 'no-answer' | 'failed';

export interface OutcomeScript {
  outcome: CallOutcome;
  /** How long the phone rings before the outcome (default: the server's ringMs). */
  ringMs?: number;
  /** Who picks up, for answering-machine detection (twilio-amd.ts); default a human. */
  amd?: AmdScript;
}

/** How a transfer's dialled party behaves; `talkMs`: how long an answered transfer talks before hanging up. */
export interface DialScript {
  outcome: CallOutcome;
  ringMs?: number;
  talkMs?: number;
}

/** A `<Dial>` the call executed, and what the dialled party did. */
export interface FakeDialRecord extends TwimlDial {
  outcome: CallOutcome;
  dialCallSid: string;
  atMs: number;
}

export interface CallbackDelivery {
  kind: 'status' | 'twiml' | 'stream-status' | 'inbound' | 'dial-status' | 'dial-action' | 'amd';
  url: string;
  method: string;
  params: Record<string, string>;
  signature: string;
  atMs: number;
  /** HTTP status of our platform's answer; 0 when the request failed. */
  status: number;
  body: string;
  error?: string;
}

export interface FakeCallRecord {
  sid: string;
  accountSid: string;
  direction: 'outbound-api' | 'inbound';
  to: string;
  from: string;
  /** Current Twilio status (queued, ringing, in-progress, completed, busy, no-answer, canceled, failed). */
  status: string;
  /** Form fields of the create request (outbound) — repeated fields as arrays. */
  params: Record<string, string | string[]>;
  statusCallbackEvents: string[];
  callbacks: CallbackDelivery[];
  twiml?: string;
  verbs?: TwimlVerb[];
  stream?: TwimlStream;
  /** Texts of <Say> verbs executed. */
  said: string[];
  /** `<Dial>`s executed (transfers), in order. */
  dials: FakeDialRecord[];
  /** TwiML documents the call was redirected to by a call update (`Twiml`), in order. */
  redirects: string[];
  caller?: TwilioCaller;
  /** Problems Twilio would report in its debugger (bad TwiML, webhook failures, stream errors). */
  errors: string[];
  createdAtMs: number;
  answeredAtMs?: number;
  endedAtMs?: number;
  durationSecs?: number;
  /** Resolves when the call has ended and the final status callback has been delivered. */
  ended: Promise<FakeCallRecord>;
}

export interface RecordedApiRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  params: Record<string, string | string[]>;
  status: number;
}

export interface FakeTwilioOptions {
  accountSid: string;
  authToken: string;
  /** Default ring time before an outcome (ms). Short by default so tests run fast. */
  ringMs?: number;
  /** Passed to simulated callers; only for unit tests of the fakes. */
  callerSpeed?: number;
  /** Keep received media messages in each caller's events (default true). */
  keepMediaEvents?: boolean;
}

export interface SimulateInboundOptions {
  /** The number's voice URL, e.g. {public_base_url}/telephony/twilio/inbound/<agent_name>. */
  webhookUrl: string;
  from: string;
  to: string;
  /** Signing token; defaults to the fake's auth token. */
  authToken?: string;
  method?: 'POST' | 'GET';
  /** The number's status callback URL (receives `completed`). */
  statusCallbackUrl?: string;
}

export interface FakeTwilio {
  apiBaseUrl: string;
  accountSid: string;
  authToken: string;
  calls: FakeCallRecord[];
  requests: RecordedApiRequest[];
  /** Outcome of the next outbound calls to `to` (or to any number when `to` is omitted). */
  setOutcome(outcome: CallOutcome | OutcomeScript, to?: string): void;
  /** How the party at `to` (number or SIP URI) answers a `<Dial>` (default: answers, talks 300 ms). */
  setDialOutcome(to: string, script: CallOutcome | DialScript): void;
  /** Resolves when the call has answered and connected its stream (or ended without one). */
  simulateInbound(opts: SimulateInboundOptions): Promise<FakeCallRecord>;
  call(sid: string): FakeCallRecord | undefined;
  lastCaller(): TwilioCaller | undefined;
  /** Resolves with the next caller that connects to a stream. */
  nextCaller(timeoutMs?: number): Promise<TwilioCaller>;
  stop(): Promise<void>;
}

const API_VERSION = '2010-04-01';
const E164 = /^\+[1-9]\d{1,14}$/;
const CALL_EVENTS = ['initiated', 'ringing', 'answered', 'completed'];
// Twilio gives a webhook 15 s to answer.
const WEBHOOK_TIMEOUT_MS = 15_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Waits `ms` or until `interrupt` settles, whichever is first, leaving no timer behind. */
function sleepUnless(ms: number, interrupt: Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void interrupt.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
const rfc2822 = (ms = Date.now()) => new Date(ms).toUTCString().replace('GMT', '+0000');

/** Twilio's request signature: HMAC-SHA1(token, url + sorted name+value pairs), base64. */
export function twilioSignature(authToken: string, url: string, params: Record<string, string>): string {
  const data = Object.keys(params)
    .sort()
    .reduce((acc, key) => acc + key + params[key], url);
  return crypto.createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

function readForm(body: string): Record<string, string | string[]> {
  const form = new URLSearchParams(body);
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(form.keys())) {
    const all = form.getAll(key);
    out[key] = all.length === 1 ? all[0] : all;
  }
  return out;
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[v.length - 1] : v;
}

function isValidAddress(n: string): boolean {
  return E164.test(n) || /^(client|sip):\S+$/.test(n);
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
}
function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** What the simulation needs besides the public record. */
interface CallState {
  record: FakeCallRecord;
  authToken: string;
  statusCallback?: string;
  statusCallbackMethod: string;
  timeLimitSecs?: number;
  sequence: number;
  hangupRequested: Deferred<void>;
  hungUp: boolean;
  settled: Deferred<void>;
  ended: Deferred<FakeCallRecord>;
  /** TwiML of a call update, run in place of the current document. */
  redirect?: TwimlVerb[];
}

export async function startFakeTwilio(opts: FakeTwilioOptions): Promise<FakeTwilio> {
  const { accountSid, authToken } = opts;
  const defaultRingMs = opts.ringMs ?? 100;
  const calls: FakeCallRecord[] = [];
  const states = new Map<string, CallState>();
  const requests: RecordedApiRequest[] = [];
  const outcomes = new Map<string, OutcomeScript>();
  const dialOutcomes = new Map<string, DialScript>();
  let defaultOutcome: OutcomeScript = { outcome: 'answer' };
  const callerWaiters: Array<(c: TwilioCaller) => void> = [];
  let lastCaller: TwilioCaller | undefined;
  let stopping = false;

  const twilioError = (res: http.ServerResponse, status: number, code: number, message: string, extra: object = {}) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status, ...extra }));
    return status;
  };

  const resource = (s: CallState) => {
    const c = s.record;
    const base = `/${API_VERSION}/Accounts/${c.accountSid}/Calls/${c.sid}`;
    return {
      account_sid: c.accountSid,
      annotation: null,
      answered_by: null,
      api_version: API_VERSION,
      caller_name: null,
      date_created: rfc2822(c.createdAtMs),
      date_updated: rfc2822(),
      direction: c.direction,
      duration: c.durationSecs === undefined ? null : String(c.durationSecs),
      end_time: c.endedAtMs ? rfc2822(c.endedAtMs) : null,
      forwarded_from: null,
      from: c.from,
      from_formatted: c.from,
      group_sid: null,
      parent_call_sid: null,
      phone_number_sid: null,
      price: null,
      price_unit: 'USD',
      queue_time: '0',
      sid: c.sid,
      start_time: c.answeredAtMs ? rfc2822(c.answeredAtMs) : null,
      status: c.status,
      subresource_uris: {
        notifications: `${base}/Notifications.json`,
        recordings: `${base}/Recordings.json`,
        streams: `${base}/Streams.json`,
        events: `${base}/Events.json`,
      },
      to: c.to,
      to_formatted: c.to,
      trunk_sid: null,
      uri: `${base}.json`,
    };
  };

  // ---- webhooks ----------------------------------------------------------------------------

  const scripts = new WeakMap<CallState, OutcomeScript>();
  const scriptOf = (s: CallState): OutcomeScript => scripts.get(s) ?? { outcome: 'answer' };

  async function deliver(
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

  const baseParams = (s: CallState, callStatus: string): Record<string, string> => ({
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

  async function statusCallback(s: CallState, event: string, callStatus: string, extra: Record<string, string> = {}) {
    if (!s.statusCallback || !s.record.statusCallbackEvents.includes(event)) return;
    await deliver(s, 'status', s.statusCallback, s.statusCallbackMethod, {
      ...baseParams(s, callStatus),
      CallbackSource: 'call-progress-events',
      SequenceNumber: String(s.sequence++),
      Timestamp: rfc2822(),
      ...extra,
    });
  }

  // ---- call simulation ---------------------------------------------------------------------

  async function finish(s: CallState, status: string, sipResponseCode: string) {
    const c = s.record;
    if (c.endedAtMs) return;
    c.status = status;
    c.endedAtMs = Date.now();
    c.durationSecs = c.answeredAtMs ? Math.round((c.endedAtMs - c.answeredAtMs) / 1000) : 0;
    await statusCallback(s, 'completed', status, {
      CallDuration: String(c.durationSecs),
      Duration: String(Math.ceil(c.durationSecs / 60)),
      SipResponseCode: sipResponseCode,
    });
    s.settled.resolve();
    s.ended.resolve(c);
  }

  async function answer(s: CallState) {
    s.record.status = 'in-progress';
    s.record.answeredAtMs = Date.now();
    if (s.timeLimitSecs) {
      const timer = setTimeout(() => hangup(s), s.timeLimitSecs * 1000);
      void s.ended.promise.then(() => clearTimeout(timer));
    }
    await statusCallback(s, 'answered', 'in-progress');
  }

  function hangup(s: CallState) {
    if (s.hungUp) return;
    s.hungUp = true;
    s.hangupRequested.resolve();
    if (s.record.caller?.isOpen) void s.record.caller.hangup();
  }

  /** Executes TwiML verbs; returns how the call ended: completed, or a <Reject> status. */
  async function runTwiml(s: CallState, verbs: TwimlVerb[]): Promise<void> {
    const c = s.record;
    if (verbs[0]?.verb === 'Reject' && !c.answeredAtMs) {
      return finish(s, verbs[0].reason === 'busy' ? 'busy' : 'no-answer', verbs[0].reason === 'busy' ? '486' : '603');
    }
    if (!c.answeredAtMs) await answer(s);
    let current: TwimlVerb[] | undefined = verbs;
    while (current) {
      let next: TwimlVerb[] | undefined;
      let over = false;
      for (const v of current) {
        if (s.hungUp) break;
        if (v.verb === 'Say') c.said.push(v.text);
        else if (v.verb === 'Pause') await sleepUnless(v.lengthSecs * 1000, s.hangupRequested.promise);
        else if (v.verb === 'Hangup' || v.verb === 'Reject') over = true;
        else if (v.verb === 'Connect') await runStream(s, v.stream);
        else if (v.verb === 'Dial') next = await runDial(s, v.dial);
        // A call update replaces whatever was running with its TwiML.
        if (s.redirect) {
          next = s.redirect;
          s.redirect = undefined;
        }
        if (over || next) break;
      }
      current = over || s.hungUp ? undefined : next;
    }
    await finish(s, 'completed', '200');
  }

  /** `<Dial>`: the dialled party per its script; returns the action URL's TwiML (or nothing: go on). */
  async function runDial(s: CallState, dial: TwimlDial): Promise<TwimlVerb[] | undefined> {
    const c = s.record;
    const script = dialOutcomes.get(dial.to) ?? { outcome: 'answer' as const };
    const record: FakeDialRecord = { ...dial, outcome: script.outcome, dialCallSid: newSid('CA'), atMs: Date.now() };
    c.dials.push(record);
    await sleepUnless(script.ringMs ?? 50, s.hangupRequested.promise);
    if (s.hungUp) return undefined;
    let dialStatus: string = script.outcome === 'answer' ? 'completed' : script.outcome;
    let talkedMs = 0;
    if (script.outcome === 'answer') {
      if (dial.statusCallback && dial.statusCallbackEvents.includes('answered')) {
        await deliver(s, 'dial-status', dial.statusCallback, 'POST', {
          AccountSid: c.accountSid,
          ApiVersion: API_VERSION,
          CallSid: record.dialCallSid,
          ParentCallSid: c.sid,
          CallStatus: 'in-progress',
          Direction: 'outbound-dial',
          From: c.from,
          To: dial.to,
          CallbackSource: 'call-progress-events',
          SequenceNumber: '0',
          Timestamp: rfc2822(),
        });
      }
      const started = Date.now();
      await sleepUnless(script.talkMs ?? 300, s.hangupRequested.promise);
      talkedMs = Date.now() - started;
    }
    if (s.hungUp) dialStatus = script.outcome === 'answer' ? 'completed' : 'canceled';
    if (!dial.action) return undefined;
    const twiml = await fetchTwiml(s, dial.action, dial.method ?? 'POST', {
      ...baseParams(s, 'in-progress'),
      DialCallStatus: dialStatus,
      DialCallSid: record.dialCallSid,
      DialCallDuration: String(Math.round(talkedMs / 1000)),
    }, 'dial-action');
    if (twiml === null || s.hungUp) return undefined;
    try {
      return parseTwiml(twiml);
    } catch (err) {
      c.errors.push(`12100 Document parse failure: ${(err as Error).message}`);
      return undefined;
    }
  }

  async function runStream(s: CallState, stream: TwimlStream) {
    const c = s.record;
    c.stream = stream;
    const url = stream.url;
    const streamCallback = async (event: string, extra: Record<string, string> = {}) => {
      if (!stream.statusCallback) return;
      await deliver(s, 'stream-status', stream.statusCallback, stream.statusCallbackMethod ?? 'POST', {
        AccountSid: c.accountSid,
        CallSid: c.sid,
        StreamSid: c.caller?.streamSid ?? '',
        StreamName: stream.name ?? c.caller?.streamSid ?? '',
        StreamEvent: event,
        Timestamp: new Date().toISOString(),
        ...extra,
      });
    };
    let problem: string | undefined;
    if (!/^wss?:\/\//i.test(url)) problem = `stream url must be wss:// (got ${url})`;
    else if (url.includes('?')) problem = 'stream url has a query string (Twilio fails the handshake; use <Parameter>)';
    if (!problem) {
      try {
        const caller = await connectTwilioCaller({
          url,
          accountSid: c.accountSid,
          callSid: c.sid,
          customParameters: stream.parameters,
          authToken: s.authToken,
          speed: opts.callerSpeed,
          keepMediaEvents: opts.keepMediaEvents,
        });
        c.caller = caller;
        lastCaller = caller;
        // Twilio's AMD listens from the answer on; the result comes while the stream runs.
        void simulateAmd(s.record, s.record.params, scriptOf(s), (url, params) => deliver(s, 'amd', url, 'POST', params));
        for (const w of callerWaiters.splice(0)) w(caller);
        s.settled.resolve();
        if (s.hungUp || stopping) void caller.hangup();
        void streamCallback('stream-started');
        await caller.closed;
        await streamCallback('stream-stopped');
        return;
      } catch (err) {
        problem = (err as Error).message;
      }
    }
    c.errors.push(`31920 Stream - WebSocket - Handshake Error: ${problem}`);
    await streamCallback('stream-error', { StreamError: problem });
  }

  async function fetchTwiml(s: CallState, url: string, method: string, params: Record<string, string>, kind: 'twiml' | 'inbound' | 'dial-action', token?: string) {
    const delivery = await deliver(s, kind, url, method, params, token);
    if (delivery.status < 200 || delivery.status >= 300) return null;
    return delivery.body;
  }

  async function execute(s: CallState, twiml: string | null) {
    const c = s.record;
    if (twiml === null) {
      // Twilio answers and says "an application error has occurred", then hangs up.
      return runTwiml(s, []);
    }
    c.twiml = twiml;
    try {
      c.verbs = parseTwiml(twiml);
    } catch (err) {
      c.errors.push(`12100 Document parse failure: ${(err as Error).message}`);
      return runTwiml(s, []);
    }
    return runTwiml(s, c.verbs);
  }

  async function simulateOutbound(s: CallState, script: OutcomeScript, twimlUrl: string | undefined, twimlMethod: string, inlineTwiml: string | undefined) {
    const c = s.record;
    const ringMs = script.ringMs ?? defaultRingMs;
    await sleep(5);
    c.status = 'queued';
    await statusCallback(s, 'initiated', 'initiated');
    if (s.hungUp) return finish(s, 'canceled', '487');
    if (script.outcome === 'failed') return finish(s, 'failed', '404');
    c.status = 'ringing';
    await statusCallback(s, 'ringing', 'ringing');
    await sleepUnless(ringMs, s.hangupRequested.promise);
    if (s.hungUp) return finish(s, 'canceled', '487');
    if (script.outcome === 'busy') return finish(s, 'busy', '486');
    if (script.outcome === 'no-answer') return finish(s, 'no-answer', '487');
    await answer(s);
    const twiml = inlineTwiml ?? (await fetchTwiml(s, twimlUrl!, twimlMethod, baseParams(s, 'in-progress'), 'twiml'));
    await execute(s, twiml);
  }

  function newState(record: Omit<FakeCallRecord, 'ended' | 'callbacks' | 'said' | 'errors' | 'createdAtMs' | 'dials' | 'redirects'>, token: string): CallState {
    const ended = deferred<FakeCallRecord>();
    const full: FakeCallRecord = { ...record, callbacks: [], said: [], dials: [], redirects: [], errors: [], createdAtMs: Date.now(), ended: ended.promise };
    const s: CallState = {
      record: full,
      authToken: token,
      statusCallbackMethod: 'POST',
      sequence: 0,
      hangupRequested: deferred<void>(),
      hungUp: false,
      settled: deferred<void>(),
      ended,
    };
    calls.push(full);
    states.set(full.sid, s);
    return s;
  }

  // ---- REST API ----------------------------------------------------------------------------

  function createCall(res: http.ServerResponse, form: Record<string, string | string[]>): number {
    const to = single(form.To);
    const from = single(form.From);
    const url = single(form.Url);
    const twiml = single(form.Twiml);
    if (!to) return twilioError(res, 400, 21201, "No 'To' number is specified");
    if (!from) return twilioError(res, 400, 21213, "No 'From' number is specified");
    if (!isValidAddress(to)) return twilioError(res, 400, 21211, `Invalid 'To' Phone Number: ${to}`);
    if (!isValidAddress(from)) return twilioError(res, 400, 21212, `Invalid 'From' Phone Number: ${from}`);
    if (!url && !twiml) return twilioError(res, 400, 21205, 'Url parameter is required.');
    if (url && !/^https?:\/\/\S+$/.test(url)) return twilioError(res, 400, 21205, `Url is not a valid URL: ${url}`);
    if (twiml && twiml.length > 4000) return twilioError(res, 400, 21232, 'Twiml must be 4000 characters or fewer');
    const statusCallback = single(form.StatusCallback);
    if (statusCallback && !/^https?:\/\/\S+$/.test(statusCallback)) {
      return twilioError(res, 400, 21609, `StatusCallback is not a valid URL: ${statusCallback}`);
    }
    const rawEvents = form.StatusCallbackEvent === undefined ? ['completed'] : ([] as string[]).concat(form.StatusCallbackEvent);
    const events = rawEvents.flatMap((e) => e.split(' ')).filter(Boolean);
    const bad = events.find((e) => !CALL_EVENTS.includes(e));
    if (bad) return twilioError(res, 400, 21626, `Invalid StatusCallbackEvent: ${bad}`);
    if (!events.includes('completed')) events.push('completed');
    for (const [field, max] of [['Timeout', 600], ['TimeLimit', 86400]] as const) {
      const v = single(form[field]);
      if (v !== undefined && (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > max)) {
        return twilioError(res, 400, 21210, `${field} must be an integer between 1 and ${max}`);
      }
    }
    const s = newState(
      {
        sid: newSid('CA'),
        accountSid,
        direction: 'outbound-api',
        to,
        from,
        status: 'queued',
        params: form,
        statusCallbackEvents: events,
      },
      authToken,
    );
    s.statusCallback = statusCallback;
    s.statusCallbackMethod = single(form.StatusCallbackMethod) ?? 'POST';
    const timeLimit = single(form.TimeLimit);
    if (timeLimit) s.timeLimitSecs = Number(timeLimit);
    const script = outcomes.get(to) ?? defaultOutcome;
    scripts.set(s, script);
    const amdProblem = amdRequestProblem(form);
    if (amdProblem) return twilioError(res, 400, 21626, amdProblem);
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(JSON.stringify(resource(s)));
    void simulateOutbound(s, script, url, single(form.Method) ?? 'POST', url ? undefined : twiml).catch((err) => {
      s.record.errors.push(`simulation failed: ${(err as Error).message}`);
      void finish(s, 'failed', '500');
    });
    return 201;
  }

  function updateCall(res: http.ServerResponse, s: CallState, form: Record<string, string | string[]>): number {
    const status = single(form.Status);
    const newTwiml = single(form.Twiml);
    if (newTwiml !== undefined && status === undefined) {
      if (s.record.status !== 'in-progress') return twilioError(res, 400, 21220, 'Call is not in-progress. Cannot redirect.');
      if (newTwiml.length > 4000) return twilioError(res, 400, 21232, 'Twiml must be 4000 characters or fewer');
      let verbs: TwimlVerb[];
      try {
        verbs = parseTwiml(newTwiml);
      } catch (err) {
        return twilioError(res, 400, 21232, `Invalid Twiml: ${(err as Error).message}`);
      }
      s.record.redirects.push(newTwiml);
      s.redirect = verbs;
      // Twilio stops the running <Connect><Stream> (a `stop` message, then the socket closes).
      if (s.record.caller?.isOpen) void s.record.caller.hangup();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(resource(s)));
      return 200;
    }
    if (status !== undefined && status !== 'completed' && status !== 'canceled') {
      return twilioError(res, 400, 20001, `Status must be one of completed, canceled`);
    }
    if (status) {
      const live = ['queued', 'ringing', 'in-progress'].includes(s.record.status);
      if (!live) return twilioError(res, 400, 21220, 'Call is not in-progress. Cannot redirect.');
      // `canceled` only ends a call that has not been answered yet.
      if (status === 'completed' || s.record.status !== 'in-progress') hangup(s);
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(resource(s)));
    return 200;
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const form = req.method === 'POST' ? readForm(body) : {};
      const record: RecordedApiRequest = { method: req.method ?? '', path, authorization: req.headers.authorization, params: form, status: 0 };
      requests.push(record);
      record.status = route(req, res, path, form);
    });
  });

  function route(req: http.IncomingMessage, res: http.ServerResponse, path: string, form: Record<string, string | string[]>): number {
    const m = /^\/2010-04-01\/Accounts\/([^/]+)\/Calls(?:\/([^/]+))?\.json$/.exec(path);
    if (!m) return twilioError(res, 404, 20404, `The requested resource ${path} was not found`);
    const expected = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
    if (req.headers.authorization !== expected) {
      res.setHeader('www-authenticate', 'Basic realm="Twilio API"');
      return twilioError(res, 401, 20003, 'Authenticate', { detail: 'Your AccountSid or AuthToken was incorrect.' });
    }
    if (m[1] !== accountSid) return twilioError(res, 404, 20404, `The requested resource ${path} was not found`);
    if (req.method === 'POST' && !String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      return twilioError(res, 400, 20001, 'Content-Type must be application/x-www-form-urlencoded');
    }
    if (!m[2]) {
      if (req.method !== 'POST') return twilioError(res, 405, 20004, 'Method not allowed');
      return createCall(res, form);
    }
    const s = states.get(m[2]);
    if (!s) return twilioError(res, 404, 20404, `The requested resource ${path} was not found`);
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(resource(s)));
      return 200;
    }
    if (req.method === 'POST') return updateCall(res, s, form);
    return twilioError(res, 405, 20004, 'Method not allowed');
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    apiBaseUrl: `http://127.0.0.1:${port}`,
    accountSid,
    authToken,
    calls,
    requests,
    setDialOutcome(to, script) {
      dialOutcomes.set(to, typeof script === 'string' ? { outcome: script } : script);
    },
    setOutcome(outcome, to) {
      const script = typeof outcome === 'string' ? { outcome } : outcome;
      if (to) outcomes.set(to, script);
      else defaultOutcome = script;
    },
    async simulateInbound(o) {
      const token = o.authToken ?? authToken;
      const s = newState(
        { sid: newSid('CA'), accountSid, direction: 'inbound', to: o.to, from: o.from, status: 'ringing', params: {}, statusCallbackEvents: ['completed'] },
        token,
      );
      s.statusCallback = o.statusCallbackUrl;
      void (async () => {
        const twiml = await fetchTwiml(s, o.webhookUrl, o.method ?? 'POST', baseParams(s, 'ringing'), 'inbound', token);
        await execute(s, twiml);
      })().catch((err) => {
        s.record.errors.push(`simulation failed: ${(err as Error).message}`);
        void finish(s, 'failed', '500');
      });
      await s.settled.promise;
      return s.record;
    },
    call: (sid) => states.get(sid)?.record,
    lastCaller: () => lastCaller,
    nextCaller(timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no caller connected within ${timeoutMs} ms`)), timeoutMs);
        callerWaiters.push((c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
    },
    async stop() {
      stopping = true;
      for (const s of states.values()) hangup(s);
      // Let each call post its final callback, but do not wait on a platform that stopped answering.
      const allEnded = Promise.all([...states.values()].map((s) => s.ended.promise));
      await sleepUnless(2000, allEnded);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
