/**
 * One call's life in the fake Twilio: ringing and its outcome, the answer, the TwiML it runs
 * (`<Say>`, `<Pause>`, `<Connect><Stream>` with a simulated caller, `<Dial>`, `<Hangup>`), call
 * updates that replace the running document, and the final `completed` callback.
 */
import { connectTwilioCaller } from './twilio-caller';
import { parseTwiml, type TwimlStream, type TwimlVerb } from './twilio-twiml';
import { simulateAmd } from './twilio-amd';
import { runDial } from './twilio-dial';
import { runConference } from './twilio-conference';
import type { CallState, FakeCallRecord, FakeTwilioContext, OutcomeScript } from './twilio-fake-types';
import { baseParams, deferred, deliver, fetchTwiml, sleep, sleepUnless, statusCallback } from './twilio-webhooks';

export async function finish(s: CallState, status: string, sipResponseCode: string) {
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

export function hangup(s: CallState) {
  if (s.hungUp) return;
  s.hungUp = true;
  s.hangupRequested.resolve();
  s.wake?.();
  if (s.record.caller?.isOpen) void s.record.caller.hangup();
}

/** Executes TwiML verbs; returns how the call ended: completed, or a <Reject> status. */
async function runTwiml(ctx: FakeTwilioContext, s: CallState, verbs: TwimlVerb[]): Promise<void> {
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
      else if (v.verb === 'Connect') await runStream(ctx, s, v.stream);
      else if (v.verb === 'Dial' && v.dial.conference) await runConference(ctx, s, v.dial.conference);
      else if (v.verb === 'Dial') next = await runDial(ctx, s, v.dial);
      else if (v.verb === 'Play') await sleepUnless(1000, s.hangupRequested.promise);
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

async function runStream(ctx: FakeTwilioContext, s: CallState, stream: TwimlStream) {
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
        speed: ctx.opts.callerSpeed,
        keepMediaEvents: ctx.opts.keepMediaEvents,
      });
      c.caller = caller;
      ctx.lastCaller = caller;
      // Twilio's AMD listens from the answer on; the result comes while the stream runs.
      void simulateAmd(s.record, s.record.params, s.script ?? {}, (url, params) => deliver(s, 'amd', url, 'POST', params));
      for (const w of ctx.callerWaiters.splice(0)) w(caller);
      s.settled.resolve();
      if (s.hungUp || ctx.stopping) void caller.hangup();
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

export async function execute(ctx: FakeTwilioContext, s: CallState, twiml: string | null) {
  const c = s.record;
  if (twiml === null) {
    // Twilio answers and says "an application error has occurred", then hangs up.
    return runTwiml(ctx, s, []);
  }
  c.twiml = twiml;
  try {
    c.verbs = parseTwiml(twiml);
  } catch (err) {
    c.errors.push(`12100 Document parse failure: ${(err as Error).message}`);
    return runTwiml(ctx, s, []);
  }
  return runTwiml(ctx, s, c.verbs);
}

export async function simulateOutbound(ctx: FakeTwilioContext, s: CallState, script: OutcomeScript, twimlUrl: string | undefined, twimlMethod: string, inlineTwiml: string | undefined) {
  const c = s.record;
  const ringMs = script.ringMs ?? ctx.defaultRingMs;
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
  const params = baseParams(s, 'in-progress');
  // Synchronous AMD (MachineDetection without AsyncAmd): the TwiML fetch waits for the verdict and carries it.
  const form = c.params;
  if (form.MachineDetection && form.AsyncAmd !== 'true') {
    const amd = script.amd ?? { answeredBy: 'human', decidedMs: 100 };
    await sleepUnless(amd.decidedMs, s.hangupRequested.promise);
    if (s.hungUp) return finish(s, 'completed', '200');
    params.AnsweredBy = amd.answeredBy === 'machine' ? 'machine_start' : amd.answeredBy;
    params.MachineDetectionDuration = String(amd.decidedMs);
  }
  const twiml = inlineTwiml ?? (await fetchTwiml(s, twimlUrl!, twimlMethod, params, 'twiml'));
  await execute(ctx, s, twiml);
}

export function newState(ctx: FakeTwilioContext, record: Omit<FakeCallRecord, 'ended' | 'callbacks' | 'said' | 'errors' | 'createdAtMs' | 'dials' | 'redirects' | 'held'>, token: string): CallState {
  const ended = deferred<FakeCallRecord>();
  const full: FakeCallRecord = { ...record, callbacks: [], said: [], dials: [], redirects: [], held: [], errors: [], createdAtMs: Date.now(), ended: ended.promise };
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
  ctx.calls.push(full);
  ctx.states.set(full.sid, s);
  return s;
}
