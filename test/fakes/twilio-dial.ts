/**
 * `<Dial>` as Twilio plays it for a transfer: the dialled party rings, answers (its status
 * callback), talks, hangs up — or is busy / does not answer / fails — then the action URL is told
 * `DialCallStatus` and its TwiML runs next.
 */
import { newSid } from './twilio-caller';
import { parseTwiml, type TwimlDial, type TwimlVerb } from './twilio-twiml';
import type { CallState, FakeDialRecord, FakeTwilioContext } from './twilio-fake-types';
import { API_VERSION, baseParams, deliver, fetchTwiml, rfc2822, sleepUnless } from './twilio-webhooks';

export /** `<Dial>`: the dialled party per its script; returns the action URL's TwiML (or nothing: go on). */
async function runDial(ctx: FakeTwilioContext, s: CallState, dial: TwimlDial): Promise<TwimlVerb[] | undefined> {
  const c = s.record;
  const script = ctx.dialOutcomes.get(dial.to) ?? { outcome: 'answer' as const };
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
