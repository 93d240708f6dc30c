/**
 * A fake Plivo on 127.0.0.1 speaking Plivo's real protocols, so the platform's Plivo adapter (the
 * official SDK), its webhooks and the media gateway can be exercised offline:
 *
 * - REST (./plivo-rest): create a call, transfer it, hang it up or cancel it. Then it plays the
 *   call like Plivo, every callback signed with X-Plivo-Signature-V3 (+ nonce): ring URL, answer
 *   URL once answered (its XML is executed), hangup URL with the final status (`completed`,
 *   `busy`, `no-answer`, `timeout`, `cancel`, `failed`), `HangupCause`, `Duration`, `BillDuration`.
 *   Outcomes are scriptable per destination: answer (default), busy, no-answer, failed, a machine.
 * - `<Stream>` connects a simulated caller (./plivo-caller) in the element's contentType, passing
 *   `extraHeaders` into `start`; with keepCallAlive the call lasts until the socket closes.
 * - Inbound: `simulateInbound` requests the number's answer URL like Plivo and follows the XML.
 * - Transfer Call API (`legs: aleg, aleg_url`) stops the `<Stream>` or takes the call out of its
 *   `<Conference>` and runs aleg_url's XML; `<Dial>` plays the dialled party per `setDialOutcome`.
 * - `<Conference>` (./plivo-conference): rooms with their members, the `waitSound` played in real
 *   time to a member waiting for the conference to start (a warm transfer's hold).
 */import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { plivoContentTypeFormat } from '../../src/providers/telephony/plivo/media-messages';
import { connectPlivoCaller, type PlivoCaller } from './plivo-caller';
import { parseXml, type XmlElement } from './twilio-twiml';
import type { CallOutcome, CallbackDelivery, CallState, FakePlivo, FakePlivoCall, FakePlivoOptions, FakeStream, OutcomeScript, RecordedApiRequest } from './plivo-fake-types';
import { baseParams, deferred, jsonBody, plivoSignatureV3, readStreamElement, sleep, sleepUnless } from './plivo-wire';
import { simulatePlivoAmd, syncPlivoAmd } from './plivo-amd';
import { plivoError, plivoRestRoute, type PlivoCalls } from './plivo-rest';
import { conferenceProblem, runConference, type ConferenceContext, type Room } from './plivo-conference';

export * from './plivo-fake-types';
export { plivoSignatureV3 } from './plivo-wire';

const WEBHOOK_TIMEOUT_MS = 15_000;

export async function startFakePlivo(opts: FakePlivoOptions): Promise<FakePlivo> {
  const { authId, authToken } = opts;
  const defaultRingMs = opts.ringMs ?? 100;
  const calls: FakePlivoCall[] = [];
  const states = new Map<string, CallState>();
  const byRequest = new Map<string, CallState>();
  const requests: RecordedApiRequest[] = [];
  const outcomes = new Map<string, OutcomeScript>();
  const dialOutcomes = new Map<string, CallOutcome>();
  const transferred = new Map<CallState, string>();
  const conferences = new Map<string, Room>();
  let defaultOutcome: OutcomeScript = { outcome: 'answer' };
  const callerWaiters: Array<(c: PlivoCaller) => void> = [];
  let lastCaller: PlivoCaller | undefined;
  let stopping = false;
  let holdDropped = false;

  const scripts = new WeakMap<CallState, OutcomeScript>();

  // ---- callbacks ---------------------------------------------------------------------------

  async function deliver(s: CallState, kind: CallbackDelivery['kind'], url: string, params: Record<string, string>): Promise<CallbackDelivery> {
    const nonce = String(crypto.randomInt(10 ** 9, 10 ** 10)) + String(crypto.randomInt(10 ** 9, 10 ** 10));
    const signature = plivoSignatureV3(s.authToken, 'POST', url, params, nonce);
    const delivery: CallbackDelivery = { kind, url, method: 'POST', params, signature, nonce, atMs: Date.now(), status: 0, body: '' };
    s.record.callbacks.push(delivery);
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'PlivoHTTP/1.0' };
    if (!s.unsigned) {
      headers['x-plivo-signature-v3'] = signature;
      headers['x-plivo-signature-v3-nonce'] = nonce;
    }
    try {
      const res = await fetch(url, { method: 'POST', headers, body: new URLSearchParams(params).toString(), signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS) });
      delivery.status = res.status;
      delivery.body = await res.text();
      if (res.status < 200 || res.status >= 300) s.record.errors.push(`${kind} ${url} answered ${res.status}`);
    } catch (err) {
      delivery.error = (err as Error).message;
      s.record.errors.push(`${kind} ${url}: ${delivery.error}`);
    }
    return delivery;
  }

  // ---- call simulation ---------------------------------------------------------------------

  async function finish(s: CallState, status: string, cause: string, source: FakePlivoCall['hangupSource']) {
    const c = s.record;
    if (c.endedAtMs) return;
    c.status = status;
    c.hangupCause = cause;
    c.hangupSource ??= source;
    c.endedAtMs = Date.now();
    // The call is over: Plivo closes a stream still running in the background.
    if (c.caller?.isOpen) void c.caller.hangup();
    c.durationSecs = c.answeredAtMs ? Math.round((c.endedAtMs - c.answeredAtMs) / 1000) : 0;
    if (s.hangupUrl) {
      await deliver(s, 'hangup', s.hangupUrl, {
        ...baseParams(s, status, 'Hangup'),
        HangupCause: cause,
        HangupCauseName: cause.split('_').map((w) => w[0] + w.slice(1).toLowerCase()).join(' '),
        HangupSource: c.hangupSource ?? 'Plivo',
        Duration: String(c.durationSecs),
        BillDuration: String(c.durationSecs),
        StartTime: new Date(c.createdAtMs).toISOString(),
        ...(c.answeredAtMs ? { AnswerTime: new Date(c.answeredAtMs).toISOString() } : {}),
        EndTime: new Date(c.endedAtMs).toISOString(),
      });
    }
    s.settled.resolve();
    s.ended.resolve(c);
  }

  function hangup(s: CallState, source: FakePlivoCall['hangupSource']) {
    if (s.hungUp) return;
    s.hungUp = true;
    s.record.hangupSource ??= source;
    s.hangupRequested.resolve();
    if (s.record.caller?.isOpen) void s.record.caller.hangup();
  }

  async function runStream(s: CallState, stream: FakeStream) {
    const c = s.record;
    c.stream = stream;
    if (!stream.bidirectional) c.errors.push('Stream: bidirectional is not true; audio sent back would be ignored');
    const streamCallback = (event: string) =>
      stream.statusCallbackUrl
        ? deliver(s, 'stream-status', stream.statusCallbackUrl, { Event: event, CallUUID: c.callUuid, StreamID: c.caller?.streamId ?? '', Timestamp: new Date().toISOString() })
        : Promise.resolve();
    let caller: PlivoCaller;
    try {
      caller = await connectPlivoCaller({
        url: stream.url,
        format: plivoContentTypeFormat(stream.contentType),
        extraHeaders: stream.extraHeaders,
        accountId: authId,
        callId: c.callUuid,
        speed: opts.callerSpeed,
        keepMediaEvents: opts.keepMediaEvents,
      });
    } catch (err) {
      c.errors.push(`Stream: connection failed: ${(err as Error).message}`);
      await streamCallback('DroppedStream');
      return;
    }
    c.caller = caller;
    lastCaller = caller;
    // Plivo's machine detection listens from the answer on; with a URL its result is posted there.
    void simulatePlivoAmd(c, scripts.get(s)?.amd, (url, params) => deliver(s, 'machine-detection', url, { ...baseParams(s, 'in-progress', 'MachineDetection'), ...params }));
    for (const w of callerWaiters.splice(0)) w(caller);
    s.settled.resolve();
    void streamCallback('StartStream');
    if (s.hungUp || stopping) void caller.hangup();
    // Without keepCallAlive the XML goes on while the stream runs in the background.
    if (!stream.keepCallAlive) return;
    const closed = await caller.closed;
    if (closed.code === 1006 && holdDropped && !s.hungUp) {
      c.errors.push('stream dropped without a close handshake: call held (keepCallAlive) until hung up');
      await s.hangupRequested.promise;
    }
    // A stream the Transfer Call API stopped is not the call's end: its next XML runs.
    if (!transferred.has(s)) c.hangupSource ??= closed.by === 'gateway' ? 'Plivo' : c.direction === 'inbound' ? 'Caller' : 'Callee';
    await streamCallback('StopStream');
  }

  /** Executes Plivo XML; when it runs out the call is hung up, as Plivo does. */
  async function execute(s: CallState, xml: string | null) {
    const c = s.record;
    if (xml === null) return finish(s, 'completed', 'NORMAL_CLEARING', 'Error');
    c.xml = xml;
    let root: XmlElement;
    try {
      root = parseXml(xml);
      if (root.name !== 'Response') throw new Error(`root element is <${root.name}>, not <Response>`);
    } catch (err) {
      c.errors.push(`invalid XML: ${(err as Error).message}`);
      return finish(s, c.answeredAtMs ? 'completed' : 'failed', 'INVALID_ANSWER_XML', 'Error');
    }
    for (const el of root.children) {
      if (s.hungUp) break;
      if (el.name === 'Hangup') {
        if (!c.answeredAtMs && (el.attrs.reason === 'rejected' || el.attrs.reason === 'busy')) {
          return finish(s, el.attrs.reason === 'busy' ? 'busy' : 'completed', el.attrs.reason === 'busy' ? 'USER_BUSY' : 'CALL_REJECTED', 'Callee');
        }
        break;
      }
      if (!c.answeredAtMs) answerNow(s);
      if (el.name === 'Speak') c.said.push(el.text.trim());
      else if (el.name === 'Wait') await sleepUnless(Number(el.attrs.length ?? '1') * 1000, s.hangupRequested.promise);
      else if (el.name === 'Stream' || el.name === 'Conference') {
        // Either element holds the call until it ends or the Transfer API moves it elsewhere.
        const stream = el.name === 'Stream' ? readStreamElement(el, c.errors) : null;
        const problem = el.name === 'Conference' ? conferenceProblem(el) : stream ? null : 'invalid <Stream>';
        if (problem) {
          if (el.name === 'Conference') c.errors.push(problem);
          return finish(s, 'completed', 'INVALID_ANSWER_XML', 'Error');
        }
        await (stream ? runStream(s, stream) : runConference(conferenceContext, s, el));
        const next = transferred.get(s);
        if (next !== undefined) {
          transferred.delete(s);
          const d = await deliver(s, 'transfer', next, baseParams(s, 'in-progress', 'Transfer'));
          return execute(s, d.status >= 200 && d.status < 300 ? d.body : null);
        }
      } else if (el.name === 'Dial') {
        const next = await runDial(s, el);
        if (next !== null) return execute(s, next);
      } else {
        c.errors.push(`unsupported element <${el.name}>`);
        return finish(s, 'completed', 'INVALID_ANSWER_XML', 'Error');
      }
    }
    if (!c.answeredAtMs) answerNow(s);
    await finish(s, 'completed', 'NORMAL_CLEARING', s.hungUp ? c.hangupSource : 'Plivo');
  }

  const conferenceContext: ConferenceContext = { conferences, deliver, baseParams: (s) => baseParams(s, 'in-progress', 'ConferenceWait') };

  /** `<Dial>` with one `<Number>` or `<User>`; returns the action URL's XML, or null to go on. */
  async function runDial(s: CallState, el: XmlElement): Promise<string | null> {
    const noun = el.children[0];
    const to = noun?.text.trim() ?? '';
    const outcome = dialOutcomes.get(to) ?? 'answer';
    s.record.dials.push({ to, action: el.attrs.action, callbackUrl: el.attrs.callbackUrl, outcome });
    const bleg = crypto.randomUUID();
    await sleepUnless(50, s.hangupRequested.promise);
    if (s.hungUp) return null;
    if (outcome === 'answer') {
      if (el.attrs.callbackUrl) await deliver(s, 'dial-callback', el.attrs.callbackUrl, { ...baseParams(s, 'in-progress', 'DialAnswer'), DialAction: 'answer', DialBLegUUID: bleg, DialBLegStatus: 'answer', DialBLegTo: to });
      await sleepUnless(300, s.hangupRequested.promise);
    }
    if (!el.attrs.action || s.hungUp) return null;
    const status = outcome === 'answer' ? 'completed' : outcome;
    const d = await deliver(s, 'dial-action', el.attrs.action, { ...baseParams(s, 'in-progress', 'Dial'), DialStatus: status, DialALegUUID: s.record.callUuid, DialBLegUUID: bleg, DialHangupCause: status === 'busy' ? 'USER_BUSY' : 'NORMAL_CLEARING' });
    return d.status >= 200 && d.status < 300 ? d.body : null;
  }

  function answerNow(s: CallState) {
    s.record.status = 'in-progress';
    s.record.answeredAtMs = Date.now();
    if (s.timeLimitSecs) {
      const timer = setTimeout(() => hangup(s, 'Plivo'), s.timeLimitSecs * 1000);
      void s.ended.promise.then(() => clearTimeout(timer));
    }
  }

  async function fetchXml(s: CallState, params: Record<string, string>): Promise<string | null> {
    const d = await deliver(s, 'answer', s.answerUrl, params);
    return d.status >= 200 && d.status < 300 ? d.body : null;
  }

  async function simulateOutbound(s: CallState, script: OutcomeScript) {
    const c = s.record;
    await sleep(5);
    if (s.hungUp) return finish(s, 'cancel', 'ORIGINATOR_CANCEL', 'API Request');
    if (script.outcome === 'failed') return finish(s, 'failed', 'UNALLOCATED_NUMBER', 'Carrier');
    c.status = 'ringing';
    if (s.ringUrl) await deliver(s, 'ring', s.ringUrl, baseParams(s, 'ringing', 'Ring'));
    const ringMs = Math.min(script.ringMs ?? defaultRingMs, s.ringTimeoutSecs * 1000);
    await sleepUnless(ringMs, s.hangupRequested.promise);
    if (s.hungUp) return finish(s, 'cancel', 'ORIGINATOR_CANCEL', 'API Request');
    if (script.outcome === 'busy') return finish(s, 'busy', 'USER_BUSY', 'Callee');
    if (script.outcome === 'no-answer') {
      return (script.ringMs ?? 0) >= s.ringTimeoutSecs * 1000
        ? finish(s, 'timeout', 'NO_ANSWER', 'Plivo')
        : finish(s, 'no-answer', 'NO_ANSWER', 'Callee');
    }
    answerNow(s);
    const machine = await syncPlivoAmd(c, script.amd);
    if (s.hungUp) return finish(s, 'completed', 'NORMAL_CLEARING', 'API Request');
    const xml = await fetchXml(s, { ...baseParams(s, 'in-progress', 'StartApp'), ...(machine ?? {}) });
    await execute(s, xml);
  }

  function newState(
    record: Omit<FakePlivoCall, 'ended' | 'callbacks' | 'said' | 'errors' | 'createdAtMs' | 'dials' | 'transfers' | 'conferences' | 'held'>,
    extra: Partial<CallState> & { answerUrl: string },
  ): CallState {
    const ended = deferred<FakePlivoCall>();
    const full: FakePlivoCall = { ...record, callbacks: [], said: [], dials: [], transfers: [], conferences: [], held: [], errors: [], createdAtMs: Date.now(), ended: ended.promise };
    const s: CallState = {
      record: full,
      authToken,
      unsigned: false,
      ringTimeoutSecs: 60,
      hangupRequested: deferred<void>(),
      hungUp: false,
      settled: deferred<void>(),
      ended,
      ...extra,
    };
    calls.push(full);
    states.set(full.callUuid, s);
    if (full.requestUuid) byRequest.set(full.requestUuid, s);
    return s;
  }

  // ---- REST API (plivo-rest.ts) ---------------------------------------------------------------

  const api: PlivoCalls = {
    authId,
    authToken,
    place(req, body) {
      const { from, to, answerUrl, ringUrl, hangupUrl, ringTimeout, timeLimit } = req;
      const requestUuid = crypto.randomUUID();
      const s = newState(
        { callUuid: crypto.randomUUID(), requestUuid, direction: 'outbound', to, from, status: 'queued', params: body },
        { answerUrl, ringUrl, hangupUrl, ringTimeoutSecs: ringTimeout, timeLimitSecs: timeLimit },
      );
      const script = outcomes.get(to.replace(/^\+/, '')) ?? defaultOutcome;
      scripts.set(s, script);
      // Its first step waits, so the 201 is written before any callback.
      void simulateOutbound(s, script).catch((err) => {
        s.record.errors.push(`simulation failed: ${(err as Error).message}`);
        void finish(s, 'failed', 'INTERNAL_ERROR', 'Error');
      });
      return requestUuid;
    },
    byCallUuid: (uuid) => states.get(uuid),
    byRequestUuid: (uuid) => byRequest.get(uuid),
    transfer(s, url) {
      s.record.transfers.push(url);
      transferred.set(s, url);
      if (s.record.caller?.isOpen) void s.record.caller.hangup();
      s.wake?.();
    },
    hangup: (s) => hangup(s, 'API Request'),
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const body = jsonBody(Buffer.concat(chunks).toString('utf8'));
      if (typeof body === 'string') {
        requests.push({ method: req.method ?? '', path, authorization: req.headers.authorization, body, status: 400 });
        plivoError(res, 400, 'invalid JSON body');
        return;
      }
      const record: RecordedApiRequest = { method: req.method ?? '', path, authorization: req.headers.authorization, body, status: 0 };
      requests.push(record);
      record.status = plivoRestRoute(api, req, res, path, body);
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    apiBaseUrl: `http://127.0.0.1:${port}`,
    authId,
    authToken,
    calls,
    requests,
    setDialOutcome(to, outcome) {
      dialOutcomes.set(to.replace(/^\+/, ''), outcome);
    },
    holdDroppedStreams(on) {
      holdDropped = on;
    },
    setOutcome(outcome, to) {
      const script = typeof outcome === 'string' ? { outcome } : outcome;
      // Plivo numbers are digits; a leading + is the same number.
      if (to) outcomes.set(to.replace(/^\+/, ''), script);
      else defaultOutcome = script;
    },
    async simulateInbound(o) {
      const s = newState(
        { callUuid: crypto.randomUUID(), direction: 'inbound', to: o.to, from: o.from, status: 'ringing', params: {} },
        { answerUrl: o.answerUrl, hangupUrl: o.hangupUrl, authToken: o.authToken ?? authToken, unsigned: o.unsigned ?? false },
      );
      void (async () => {
        const xml = await fetchXml(s, baseParams(s, 'ringing', 'StartApp'));
        await execute(s, xml);
      })().catch((err) => {
        s.record.errors.push(`simulation failed: ${(err as Error).message}`);
        void finish(s, 'failed', 'INTERNAL_ERROR', 'Error');
      });
      await s.settled.promise;
      return s.record;
    },
    call: (uuid) => states.get(uuid)?.record,
    conference: (name) => conferences.get(name),
    callByRequest: (uuid) => byRequest.get(uuid)?.record,
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
      for (const s of states.values()) hangup(s, 'Plivo');
      const allEnded = Promise.all([...states.values()].map((s) => s.ended.promise));
      await sleepUnless(2000, allEnded);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
