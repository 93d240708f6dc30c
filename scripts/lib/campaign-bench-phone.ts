/**
 * The phone company of `npm run bench:campaign` (scripts/bench-campaign.ts): the vendor's fake
 * (Twilio or Plivo) speaking its real REST and webhook protocol, and a media stand-in in place of
 * the gateway. The stand-in plays the callees who answer: it accepts whatever stream the fake opens
 * and closes it `talkMs` after its first message — the callee hanging up — unless the call is held
 * (the benchmark's inbound calls, which last longer). No audio pipeline runs: the benchmark measures
 * the campaign's dialling, not speech, and 20 pipelines would crowd 2 cores out of the measurement.
 *
 * The fake's own request log is the judge of who was dialled: every outbound call it was asked to
 * place, with our call id (the answer URL names it) — independent of what the platform recorded.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { plivoSignatureV3, startFakePlivo, type FakePlivo } from '../../test/fakes/plivo-server';
import { startFakeTwilio, type FakeTwilio } from '../../test/fakes/twilio-server';

export type BenchOutcome = 'answer' | 'busy' | 'no-answer' | 'failed';

export interface DialRecord {
  /** E.164 with +, whatever form the vendor's wire carries. */
  to: string;
  /** Our call id, from the answer URL the platform handed the vendor. */
  callId: string;
}

export interface BenchPhone {
  provider: string;
  /** Environment the API and worker need to reach the fake's REST API. */
  env: Record<string, string>;
  /** PUT /api/settings/telephony fields besides provider and public_base_url. */
  settings(phoneNumber: string, maxConcurrent: number): Record<string, unknown>;
  setOutcome(to: string, outcome: BenchOutcome, ringMs?: number): void;
  /** Every outbound call the fake was asked to place, in order. */
  dialLog(): DialRecord[];
  /** Outbound and inbound calls the fake has ringing or up right now. */
  liveLegs(): { outbound: number; inbound: number };
  /**
   * An inbound call to our number through the vendor's webhook; held up for `holdMs` after its
   * stream connected, then hung up by the caller. Resolves with whether the platform carried it
   * (answered with a stream that connected) once it ended.
   */
  ringInbound(o: { webhookUrl: string; statusUrl: string; from: string; to: string; holdMs: number }): Promise<{ carried: boolean; detail: string }>;
  /** The stand-in's media URL (GATEWAY_PUBLIC_URL). */
  mediaUrl: string;
  /** Where the platform's API listens (Plivo: the stand-in reports each stream's start there). */
  setApiUrl(url: string): void;
  stop(): Promise<void>;
}

/** The stand-in gateway: holds each stream `talkMs`, or until released when its opening messages name a held id. */
async function startStandIn(talkMs: number, onStream: (opening: string) => void = () => undefined) {
  const server = http.createServer();
  const wss = new WebSocketServer({ server });
  const held = new Map<string, WebSocket | null>();
  wss.on('connection', (socket) => {
    // The opening messages (Twilio: `connected`, then `start` with the CallSid; Plivo: `start`), kept to find a held call's id.
    let opening = '';
    const keep = (data: Buffer) => {
      opening += data.toString();
      if (opening.length > 4000) socket.off('message', keep);
    };
    socket.on('message', keep);
    socket.once('message', () => {
      setImmediate(() => onStream(opening));
      setTimeout(() => {
        // An inbound call's provider id is known only once its stream is up: checked at hang-up time.
        for (const id of held.keys()) if (opening.includes(id)) return held.set(id, socket);
        socket.close(1000);
      }, talkMs).unref();
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold: (id: string) => held.set(id, null),
    release(id: string) {
      held.get(id)?.close(1000);
      held.delete(id);
    },
    async stop() {
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

const callIdOf = (url: unknown) => /\/answer\/([0-9a-f-]{36})/.exec(String(url ?? ''))?.[1] ?? '';
const plus = (n: string) => (n.startsWith('+') ? n : `+${n}`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const LIVE = new Set(['queued', 'ringing', 'in-progress']);

export async function startBenchPhone(provider: string, talkMs: number): Promise<BenchPhone> {
  let apiUrl = '';
  let onStream = (_opening: string): void => undefined;
  const standIn = await startStandIn(talkMs, (opening) => onStream(opening));
  const common = { mediaUrl: standIn.url, setApiUrl: (url: string) => void (apiUrl = url) };
  // Inbound: wait for its stream, hold it, then let the caller hang up.
  // Resolves with how long it was up: a call the platform ended early carried nothing much.
  const holdThenRelease = async (id: string, holdMs: number, ended: Promise<unknown>) => {
    const from = Date.now();
    await Promise.race([sleep(holdMs), ended]);
    const upMs = Date.now() - from;
    standIn.release(id);
    await ended;
    return upMs;
  };
  if (provider === 'twilio') {
    const accountSid = `AC${'be'.repeat(16)}`;
    const authToken = 'bench-campaign-twilio-token-0123456789';
    const twilio: FakeTwilio = await startFakeTwilio({ accountSid, authToken, keepMediaEvents: false });
    return {
      ...common,
      provider,
      env: { TWILIO_API_BASE_URL: twilio.apiBaseUrl },
      settings: (phoneNumber, maxConcurrent) => ({ twilio_account_sid: accountSid, twilio_auth_token: authToken, twilio_phone_number: phoneNumber, twilio_max_concurrent: maxConcurrent }),
      setOutcome: (to, outcome, ringMs) => twilio.setOutcome(ringMs === undefined ? outcome : { outcome, ringMs }, to),
      dialLog: () => twilio.calls.filter((c) => c.direction !== 'inbound').map((c) => ({ to: plus(c.to), callId: callIdOf(c.params.Url) })),
      liveLegs: () => ({
        outbound: twilio.calls.filter((c) => c.direction !== 'inbound' && LIVE.has(c.status)).length,
        inbound: twilio.calls.filter((c) => c.direction === 'inbound' && LIVE.has(c.status)).length,
      }),
      async ringInbound(o) {
        const pending = twilio.simulateInbound({ webhookUrl: o.webhookUrl, statusCallbackUrl: o.statusUrl, from: o.from, to: o.to });
        const record = await pending;
        standIn.hold(record.sid);
        const carried = !!record.stream && !!record.caller;
        const upMs = await holdThenRelease(record.sid, o.holdMs, record.ended);
        return { carried: carried && upMs >= o.holdMs, detail: `up ${(upMs / 1000).toFixed(1)} s, ` + `${record.status}${record.errors.length ? ` (${record.errors.join('; ')})` : ''}` };
      },
      async stop() {
        await twilio.stop();
        await standIn.stop();
      },
    };
  }
  if (provider === 'plivo') {
    const authId = 'MABENCHCAMPAIGN00000';
    const authToken = 'bench-campaign-plivo-token-0123456789';
    const plivo: FakePlivo = await startFakePlivo({ authId, authToken, keepMediaEvents: false });
    // The gateway marks a call in_progress when its stream starts (answered-calls.ts); Plivo itself
    // reports the answer only in the answer-URL request, which connects the stream and moves no
    // status. Without a gateway every answered call would end `no_answer`: the stand-in reports
    // the answer instead, as a signed Plivo callback `in-progress` to the call's status URL.
    onStream = (opening) => {
      const call = plivo.calls.find((c) => c.direction === 'outbound' && opening.includes(c.callUuid));
      const callId = callIdOf(call?.params.answer_url);
      if (!call || !callId || !apiUrl) return;
      const url = `${apiUrl}/telephony/plivo/status/${callId}`;
      const params = { CallUUID: call.callUuid, CallStatus: 'in-progress', Direction: 'outbound', From: call.from, To: call.to, Event: 'StartApp' };
      const nonce = String(crypto.randomInt(1e9, 1e10));
      const headers = { 'content-type': 'application/x-www-form-urlencoded', 'x-plivo-signature-v3': plivoSignatureV3(authToken, 'POST', url, params, nonce), 'x-plivo-signature-v3-nonce': nonce };
      void fetch(url, { method: 'POST', headers, body: new URLSearchParams(params).toString() }).catch(() => undefined);
    };
    return {
      ...common,
      provider,
      env: { PLIVO_API_BASE_URL: plivo.apiBaseUrl },
      settings: (phoneNumber, maxConcurrent) => ({ plivo_auth_id: authId, plivo_auth_token: authToken, plivo_phone_number: phoneNumber, plivo_max_concurrent: maxConcurrent }),
      setOutcome: (to, outcome, ringMs) => {
        // Plivo's wire carries E.164 without the +: the fake keys outcomes by what it receives.
        const script = ringMs === undefined ? outcome : { outcome, ringMs };
        plivo.setOutcome(script, to.replace(/^\+/, ''));
        plivo.setOutcome(script, to);
      },
      dialLog: () => plivo.calls.filter((c) => c.direction === 'outbound').map((c) => ({ to: plus(c.to), callId: callIdOf(c.params.answer_url) })),
      liveLegs: () => ({
        outbound: plivo.calls.filter((c) => c.direction === 'outbound' && LIVE.has(c.status)).length,
        inbound: plivo.calls.filter((c) => c.direction === 'inbound' && LIVE.has(c.status)).length,
      }),
      async ringInbound(o) {
        const record = await plivo.simulateInbound({ answerUrl: o.webhookUrl, hangupUrl: o.statusUrl, from: o.from, to: o.to });
        standIn.hold(record.callUuid);
        const carried = !!record.stream;
        const upMs = await holdThenRelease(record.callUuid, o.holdMs, record.ended);
        return { carried: carried && upMs >= o.holdMs, detail: `up ${(upMs / 1000).toFixed(1)} s, ` + `${record.status}${record.errors.length ? ` (${record.errors.join('; ')})` : ''}` };
      },
      async stop() {
        await plivo.stop();
        await standIn.stop();
      },
    };
  }
  await standIn.stop();
  throw new Error(`--provider must be twilio or plivo (the Exotel fake is not wired into this benchmark)`);
}
