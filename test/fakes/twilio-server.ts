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
 *
 * - Warm transfers: `<Dial><Conference>` (twilio-conference.ts): the waiting participant hears the
 *   `waitUrl` document's `<Play>` audio (recorded frame by frame in the call's `held`) until a
 *   participant with `startConferenceOnEnter` joins; `conference(name)` says who is in it. A call
 *   update with `Url` fetches the new document first. Outbound calls with `MachineDetection` and no
 *   `AsyncAmd` fetch their `Url` with `AnsweredBy` (synchronous AMD, scripted by `setOutcome`'s `amd`).
 *
 * Split by what it does: twilio-rest.ts (the Calls API), twilio-call-flow.ts (a call's life and its
 * TwiML), twilio-dial.ts (`<Dial>` transfers), twilio-webhooks.ts (signed callbacks),
 * twilio-fake-types.ts (the types below re-exported).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { newSid } from './twilio-caller';
import type { FakeTwilio, FakeTwilioContext, FakeTwilioOptions, RecordedApiRequest } from './twilio-fake-types';
import { execute, finish, hangup, newState } from './twilio-call-flow';
import { readForm, route } from './twilio-rest';
import { baseParams, fetchTwiml, sleepUnless } from './twilio-webhooks';

export type {
  CallOutcome,
  CallbackDelivery,
  DialScript,
  FakeCallRecord,
  FakeDialRecord,
  FakeTwilio,
  FakeTwilioOptions,
  OutcomeScript,
  RecordedApiRequest,
  SimulateInboundOptions,
} from './twilio-fake-types';
export { twilioSignature } from './twilio-webhooks';

export async function startFakeTwilio(opts: FakeTwilioOptions): Promise<FakeTwilio> {
  const { accountSid, authToken } = opts;
  const ctx: FakeTwilioContext = {
    opts,
    accountSid,
    authToken,
    defaultRingMs: opts.ringMs ?? 100,
    calls: [],
    states: new Map(),
    requests: [],
    outcomes: new Map(),
    dialOutcomes: new Map(),
    conferences: new Map(),
    defaultOutcome: { outcome: 'answer' },
    callerWaiters: [],
    stopping: false,
  };
  const { states } = ctx;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const form = req.method === 'POST' ? readForm(body) : {};
      const record: RecordedApiRequest = { method: req.method ?? '', path, authorization: req.headers.authorization, params: form, status: 0 };
      ctx.requests.push(record);
      record.status = route(ctx, req, res, path, form);
    });
  });


  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    apiBaseUrl: `http://127.0.0.1:${port}`,
    accountSid,
    authToken,
    calls: ctx.calls,
    requests: ctx.requests,
    setDialOutcome(to, script) {
      ctx.dialOutcomes.set(to, typeof script === 'string' ? { outcome: script } : script);
    },
    setOutcome(outcome, to) {
      const script = typeof outcome === 'string' ? { outcome } : outcome;
      if (to) ctx.outcomes.set(to, script);
      else ctx.defaultOutcome = script;
    },
    async simulateInbound(o) {
      const token = o.authToken ?? authToken;
      const s = newState(
        ctx,
        { sid: newSid('CA'), accountSid, direction: 'inbound', to: o.to, from: o.from, status: 'ringing', params: {}, statusCallbackEvents: ['completed'] },
        token,
      );
      s.statusCallback = o.statusCallbackUrl;
      void (async () => {
        const twiml = await fetchTwiml(s, o.webhookUrl, o.method ?? 'POST', baseParams(s, 'ringing'), 'inbound', token);
        await execute(ctx, s, twiml);
      })().catch((err) => {
        s.record.errors.push(`simulation failed: ${(err as Error).message}`);
        void finish(s, 'failed', '500');
      });
      await s.settled.promise;
      return s.record;
    },
    call: (sid) => states.get(sid)?.record,
    conference: (name) => ctx.conferences.get(name),
    lastCaller: () => ctx.lastCaller,
    nextCaller(timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no caller connected within ${timeoutMs} ms`)), timeoutMs);
        ctx.callerWaiters.push((c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
    },
    async stop() {
      ctx.stopping = true;
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
