/**
 * A fake Exotel on 127.0.0.1 speaking Exotel's protocols, so the platform's Exotel adapter, its
 * webhooks and the media gateway can be exercised offline:
 *
 * - REST (form bodies, JSON answers, HTTP Basic `api_key:api_token`):
 *   `POST /v1/Accounts/{sid}/Calls/connect[.json]` with the AgentStream parameters (`from`,
 *   `callerid`, `streamurl`, `streamtype=bidirectional`, `statuscallback`,
 *   `statuscallbackevents[]`, `timelimit`, `customfield`) → `{"call": {"sid", "status", …}}`;
 *   `POST /v1/Accounts/{sid}/Calls/{CallSid}[.json]` with `Status=completed` ends a call (404 when
 *   it is over or unknown). Errors are `{"RestException": {"Status", "Message", "Code"}}`.
 * - Outbound: ring, then the scripted outcome; answered → the `answered` status callback (if
 *   subscribed), the Voicebot stream to `streamurl` (./exotel-caller), and when the call ends the
 *   `terminal` callback (`completed`, `busy`, `no-answer`, `failed`, `canceled`) with
 *   `ConversationDuration`. Callbacks are unsigned form POSTs, as Exotel's are.
 * - Inbound (`simulateInbound`): the Voicebot applet asks its URL (GET, `CallSid`, `CallFrom`,
 *   `CallTo`, `Direction=incoming`; Indian numbers written nationally, `0…`) for the stream URL
 *   (`{"url": "wss://…"}`) and opens it; an error answer fails the applet and the flow's next
 *   applet (a Hangup) ends the call.
 * - The stream closing ends the applet and with it the call (the flow's Hangup), unless
 *   `holdDroppedStreams(true)`: then a stream dropped without a close handshake leaves the call up
 *   until hung up through the API.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectExotelCaller, type ExotelCaller } from './exotel-caller';

export type CallOutcome = 'answer' | 'busy' | 'no-answer' | 'failed';

export interface ExotelCallback {
  kind: 'status' | 'applet';
  url: string;
  params: Record<string, string>;
  status: number;
  body: string;
  error?: string;
}

export interface FakeExotelCall {
  sid: string;
  direction: 'outbound-api' | 'incoming';
  from: string;
  to: string;
  /** queued, ringing, in-progress, completed, busy, no-answer, failed, canceled. */
  status: string;
  /** Form of the create request (outbound). */
  params: Record<string, string | string[]>;
  streamUrl?: string;
  caller?: ExotelCaller;
  callbacks: ExotelCallback[];
  /** Who ended it: the API (REST hang-up), the caller, the stream closing (our side), Exotel. */
  endedBy?: 'api' | 'caller' | 'stream-closed' | 'applet-failed' | 'exotel';
  errors: string[];
  answeredAtMs?: number;
  endedAtMs?: number;
  ended: Promise<FakeExotelCall>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  params: Record<string, string | string[]>;
  status: number;
}

export interface FakeExotel {
  apiBaseUrl: string;
  accountSid: string;
  calls: FakeExotelCall[];
  requests: RecordedRequest[];
  setOutcome(outcome: CallOutcome | { outcome: CallOutcome; ringMs?: number }, to?: string): void;
  holdDroppedStreams(on: boolean): void;
  /** Resolves once the stream connected (or the call ended without one). */
  simulateInbound(opts: { appletUrl: string; from: string; to: string; statusCallbackUrl?: string }): Promise<FakeExotelCall>;
  call(sid: string): FakeExotelCall | undefined;
  nextCaller(timeoutMs?: number): Promise<ExotelCaller>;
  stop(): Promise<void>;
}

const NUMBER = /^(?:\+[1-9]\d{6,14}|0\d{9,11})$/;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface State {
  call: FakeExotelCall;
  statusUrl?: string;
  events: string[];
  hangup: { promise: Promise<void>; resolve(): void };
  settled: () => void;
  settledPromise: Promise<void>;
  finished: (c: FakeExotelCall) => void;
}

function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve!: () => void;
  return { promise: new Promise<void>((r) => (resolve = r)), resolve };
}

/** `+919876543210` → `09876543210`, as Exotel writes Indian numbers; others unchanged. */
export const exotelNational = (n: string) => (/^\+91\d{10}$/.test(n) ? `0${n.slice(3)}` : n);

export async function startFakeExotel(opts: { accountSid: string; apiKey: string; apiToken: string; ringMs?: number; keepMediaEvents?: boolean }): Promise<FakeExotel> {
  const { accountSid } = opts;
  const calls: FakeExotelCall[] = [];
  const states = new Map<string, State>();
  const requests: RecordedRequest[] = [];
  const outcomes = new Map<string, { outcome: CallOutcome; ringMs?: number }>();
  let defaultOutcome: { outcome: CallOutcome; ringMs?: number } = { outcome: 'answer' };
  const waiters: Array<(c: ExotelCaller) => void> = [];
  let holdDropped = false;
  let stopping = false;

  async function deliver(s: State, kind: ExotelCallback['kind'], url: string, params: Record<string, string>): Promise<ExotelCallback> {
    const cb: ExotelCallback = { kind, url, params, status: 0, body: '' };
    s.call.callbacks.push(cb);
    try {
      const res =
        kind === 'applet'
          ? await fetch(`${url}${url.includes('?') ? '&' : '?'}${new URLSearchParams(params)}`, { headers: { 'user-agent': 'Exotel/1.0' }, signal: AbortSignal.timeout(10_000) })
          : await fetch(url, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Exotel/1.0' },
              body: new URLSearchParams(params).toString(),
              signal: AbortSignal.timeout(15_000),
            });
      cb.status = res.status;
      cb.body = await res.text();
      if (kind === 'status' && (res.status < 200 || res.status >= 300)) s.call.errors.push(`status callback answered ${res.status}`);
    } catch (err) {
      cb.error = (err as Error).message;
      s.call.errors.push(`${kind} ${url}: ${cb.error}`);
    }
    return cb;
  }

  const statusParams = (s: State, eventType: string): Record<string, string> => {
    const c = s.call;
    const talk = c.answeredAtMs ? Math.round(((c.endedAtMs ?? Date.now()) - c.answeredAtMs) / 1000) : 0;
    return {
      CallSid: c.sid,
      Status: c.status,
      EventType: eventType,
      DateUpdated: new Date().toISOString().slice(0, 19).replace('T', ' '),
      Direction: c.direction,
      From: exotelNational(c.direction === 'incoming' ? c.from : c.to),
      To: exotelNational(c.direction === 'incoming' ? c.to : c.from),
      ConversationDuration: String(talk),
      RecordingUrl: '',
      CustomField: typeof c.params.customfield === 'string' ? c.params.customfield : '',
    };
  };

  async function finish(s: State, status: string, by: FakeExotelCall['endedBy']) {
    const c = s.call;
    if (c.endedAtMs) return;
    c.status = status;
    c.endedBy ??= by;
    c.endedAtMs = Date.now();
    if (c.caller?.isOpen) void c.caller.hangup();
    if (s.statusUrl && s.events.includes('terminal')) await deliver(s, 'status', s.statusUrl, statusParams(s, 'terminal'));
    s.settled();
    s.finished(c);
  }

  function hangup(s: State, by: FakeExotelCall['endedBy']) {
    s.call.endedBy ??= by;
    s.hangup.resolve();
    if (s.call.caller?.isOpen) void s.call.caller.hangup();
  }

  /** The Voicebot applet: streams until the socket closes, then the flow's Hangup ends the call. */
  async function runStream(s: State, url: string) {
    const c = s.call;
    c.streamUrl = url;
    let caller: ExotelCaller;
    try {
      caller = await connectExotelCaller({ url, accountSid, callSid: c.sid, from: c.from, to: c.to, keepMediaEvents: opts.keepMediaEvents });
    } catch (err) {
      c.errors.push(`stream: connection failed: ${(err as Error).message}`);
      return finish(s, 'completed', 'applet-failed');
    }
    c.caller = caller;
    for (const w of waiters.splice(0)) w(caller);
    s.settled();
    if (stopping) void caller.hangup();
    const closed = await caller.closed;
    if (closed.code === 1006 && holdDropped && !c.endedBy) {
      c.errors.push('stream dropped without a close handshake: call held until hung up');
      await s.hangup.promise;
    }
    await finish(s, 'completed', closed.by === 'caller' ? 'caller' : 'stream-closed');
  }

  function newState(call: Omit<FakeExotelCall, 'callbacks' | 'errors' | 'ended'>, statusUrl?: string, events: string[] = []): State {
    let finished!: (c: FakeExotelCall) => void;
    const ended = new Promise<FakeExotelCall>((r) => (finished = r));
    let settled!: () => void;
    const settledPromise = new Promise<void>((r) => (settled = r));
    const full: FakeExotelCall = { ...call, callbacks: [], errors: [], ended };
    const s: State = { call: full, statusUrl, events, hangup: deferred(), settled, settledPromise, finished };
    calls.push(full);
    states.set(full.sid, s);
    return s;
  }

  async function simulateOutbound(s: State, script: { outcome: CallOutcome; ringMs?: number }, streamUrl: string) {
    await sleep(5);
    if (script.outcome === 'failed') return finish(s, 'failed', 'exotel');
    s.call.status = 'ringing';
    if (s.statusUrl && s.events.includes('ringing')) await deliver(s, 'status', s.statusUrl, statusParams(s, 'ringing'));
    await Promise.race([sleep(script.ringMs ?? opts.ringMs ?? 100), s.hangup.promise]);
    if (s.call.endedBy === 'api') return finish(s, 'canceled', 'api');
    if (script.outcome !== 'answer') return finish(s, script.outcome, 'exotel');
    s.call.status = 'in-progress';
    s.call.answeredAtMs = Date.now();
    if (s.statusUrl && s.events.includes('answered')) await deliver(s, 'status', s.statusUrl, statusParams(s, 'answered'));
    await runStream(s, streamUrl);
  }

  const answer = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
    return status;
  };
  const restError = (res: http.ServerResponse, status: number, message: string, code = status * 100) =>
    answer(res, status, { RestException: { Status: status, Message: message, Code: code } });

  const one = (p: Record<string, string | string[]>, k: string) => (typeof p[k] === 'string' ? (p[k] as string) : undefined);

  function createCall(res: http.ServerResponse, p: Record<string, string | string[]>): number {
    const from = one(p, 'from');
    const callerId = one(p, 'callerid');
    const streamUrl = one(p, 'streamurl');
    if (!from || !NUMBER.test(from)) return restError(res, 400, `Invalid 'from' number: ${from ?? '(missing)'}`, 13224);
    if (!callerId) return restError(res, 400, "Missing parameter 'callerid'", 13223);
    if (!streamUrl || !/^wss?:\/\/\S+$/.test(streamUrl) || streamUrl.length > 600) return restError(res, 400, "'streamurl' must be a ws(s):// URL of at most 600 characters");
    if (one(p, 'streamtype') !== 'bidirectional') return restError(res, 400, "'streamtype' must be bidirectional for a Voicebot stream");
    const statusUrl = one(p, 'statuscallback');
    if (statusUrl !== undefined && !/^https?:\/\/\S+$/.test(statusUrl)) return restError(res, 400, "'statuscallback' is not a URL");
    const events = ([] as string[]).concat(p['statuscallbackevents[]'] ?? []);
    if (events.some((e) => !['answered', 'terminal', 'ringing'].includes(e))) return restError(res, 400, `unknown statuscallbackevents ${events.join(',')}`);
    const limit = one(p, 'timelimit');
    if (limit !== undefined && !(/^\d+$/.test(limit) && Number(limit) >= 1 && Number(limit) <= 14_400)) return restError(res, 400, "'timelimit' must be 1–14400");
    const sid = crypto.randomBytes(16).toString('hex');
    const s = newState({ sid, direction: 'outbound-api', from: callerId, to: from, status: 'queued', params: p }, statusUrl, events);
    void simulateOutbound(s, outcomes.get(from) ?? defaultOutcome, streamUrl).catch((err) => {
      s.call.errors.push(`simulation failed: ${(err as Error).message}`);
      void finish(s, 'failed', 'exotel');
    });
    return answer(res, 200, { call: { sid, status: 'queued', from, phonenumbersid: callerId, direction: 'outbound-api', datecreated: new Date().toISOString(), recordingurl: null } });
  }

  function route(req: http.IncomingMessage, res: http.ServerResponse, path: string, p: Record<string, string | string[]>): number {
    const expected = `Basic ${Buffer.from(`${opts.apiKey}:${opts.apiToken}`).toString('base64')}`;
    if (req.headers.authorization !== expected) return restError(res, 401, 'Authentication is required to view this resource.');
    const m = /^\/v1\/Accounts\/([^/]+)\/Calls\/([^/]+?)(?:\.json)?$/i.exec(path);
    if (!m || m[1] !== accountSid) return restError(res, 404, 'The requested resource was not found');
    if (req.method !== 'POST') return restError(res, 405, 'Method not allowed');
    if (m[2]!.toLowerCase() === 'connect') return createCall(res, p);
    const s = states.get(m[2]!);
    if (!s || s.call.endedAtMs) return restError(res, 404, 'The requested call was not found or is over');
    if (one(p, 'Status') !== 'completed') return restError(res, 400, "'Status' must be completed");
    hangup(s, 'api');
    return answer(res, 200, { call: { sid: s.call.sid, status: s.call.status } });
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const params: Record<string, string | string[]> = {};
      for (const [k, v] of new URLSearchParams(Buffer.concat(chunks).toString('utf8'))) {
        const prev = params[k];
        params[k] = prev === undefined ? v : ([] as string[]).concat(prev, v);
      }
      const record: RecordedRequest = { method: req.method ?? '', path, params, status: 0 };
      requests.push(record);
      record.status = route(req, res, path, params);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    apiBaseUrl: `http://127.0.0.1:${port}`,
    accountSid,
    calls,
    requests,
    setOutcome(outcome, to) {
      const script = typeof outcome === 'string' ? { outcome } : outcome;
      if (to) outcomes.set(to, script);
      else defaultOutcome = script;
    },
    holdDroppedStreams(on) {
      holdDropped = on;
    },
    async simulateInbound(o) {
      const sid = crypto.randomBytes(16).toString('hex');
      const s = newState({ sid, direction: 'incoming', from: o.from, to: o.to, status: 'in-progress', params: {}, answeredAtMs: Date.now() }, o.statusCallbackUrl, o.statusCallbackUrl ? ['terminal'] : []);
      void (async () => {
        const applet = await deliver(s, 'applet', o.appletUrl, {
          CallSid: sid,
          CallFrom: exotelNational(o.from),
          CallTo: exotelNational(o.to),
          Direction: 'incoming',
          Created: new Date().toISOString().slice(0, 19).replace('T', ' '),
          CallType: 'call-attempt',
        });
        let url: unknown;
        try {
          url = JSON.parse(applet.body).url;
        } catch {
          url = undefined;
        }
        if (applet.status < 200 || applet.status >= 300 || typeof url !== 'string' || !/^wss?:\/\//.test(url)) {
          // The applet failed: the flow's next applet (a Hangup) ends the call.
          return finish(s, 'completed', 'applet-failed');
        }
        await runStream(s, url);
      })().catch((err) => {
        s.call.errors.push(`simulation failed: ${(err as Error).message}`);
        void finish(s, 'failed', 'exotel');
      });
      await s.settledPromise;
      return s.call;
    },
    call: (sid) => states.get(sid)?.call,
    nextCaller(timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no caller connected within ${timeoutMs} ms`)), timeoutMs);
        waiters.push((c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
    },
    async stop() {
      stopping = true;
      for (const s of states.values()) hangup(s, 'exotel');
      await Promise.race([Promise.all([...states.values()].map((s) => s.call.ended)), sleep(2000)]);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
