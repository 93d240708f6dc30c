/**
 * Cold transfer on Twilio (twilio.com/docs/voice/api/call-resource#update-a-call-resource): the
 * live call is updated with new TwiML, `<Dial action>` with a `<Number>` or `<Sip>`. Twilio ends
 * the current `<Connect><Stream>` (our media stream closes) and dials. The dialled leg's
 * `statusCallbackEvent="answered"` tells us the hand-over happened; the Dial `action` URL gets
 * `DialCallStatus` when the dial ends — busy / no-answer / failed / canceled come back to the
 * agent (we answer a new `<Connect><Stream>`), completed (the human conversation is over) hangs up.
 */
import twilio from 'twilio';
import { TelephonyProviderError, type HttpAnswer, type TransferReport, type TransferSupport } from '../types';
import type { TransferOutcome } from '../../../shared/transfer';
import { field, webhookParams } from '../webhook-fields';
import { toProviderError, twilioClient, type TwilioCredentials } from './client';
import { twilioWarmTransfer } from './warm';

const { VoiceResponse } = twilio.twiml;
const twiml = (body: string): HttpAnswer => ({ status: 200, contentType: 'text/xml', body });

// Twilio's <Dial timeout> bounds.
const MIN_DIAL_SECS = 5;
const MAX_DIAL_SECS = 600;
// Twilio answers 21220 when the call is no longer active.
const CALL_NOT_ACTIVE = 21220;

/** DialCallStatus → neutral; `answered` is what Twilio reports for a bridged <Sip>/<Number> that ended normally in some flows. */
const DIAL_STATUS: Record<string, TransferOutcome> = {
  completed: 'completed',
  answered: 'completed',
  busy: 'busy',
  'no-answer': 'no_answer',
  failed: 'failed',
  canceled: 'canceled',
};

export const twilioTransfer: TransferSupport<TwilioCredentials> = {
  async start(creds, callSid, req) {
    const document = twilioTransfer.dialDocument(req).body;
    try {
      await twilioClient(creds).calls(callSid).update({ twiml: document });
    } catch (err) {
      const mapped = toProviderError(err);
      if (mapped.code === CALL_NOT_ACTIVE) throw new TelephonyProviderError('twilio', 'rejected', 'the call is no longer active', CALL_NOT_ACTIVE, mapped.httpStatus);
      throw mapped;
    }
  },

  dialDocument({ target, actionUrl, eventsUrl, ringTimeoutSecs }) {
    const response = new VoiceResponse();
    const timeout = Math.max(MIN_DIAL_SECS, Math.min(MAX_DIAL_SECS, Math.round(ringTimeoutSecs)));
    const dial = response.dial({ action: actionUrl, method: 'POST', timeout });
    const leg = { statusCallbackEvent: ['answered' as const], statusCallback: eventsUrl, statusCallbackMethod: 'POST' as const };
    if (target.phoneNumber) dial.number(leg, target.phoneNumber);
    else dial.sip(leg, target.sipUri!);
    return twiml(response.toString());
  },

  report(req): TransferReport | null {
    const params = webhookParams(req);
    const dialStatus = field(params, 'DialCallStatus');
    if (dialStatus) {
      const outcome = DIAL_STATUS[dialStatus];
      if (!outcome) return null;
      const detail: Record<string, unknown> = { provider_status: dialStatus };
      const sid = field(params, 'DialCallSid');
      if (sid) detail.dial_call_sid = sid;
      const duration = field(params, 'DialCallDuration');
      if (duration) detail.dial_duration = Number(duration);
      return { outcome, final: true, detail };
    }
    // The dialled leg's own status callback (statusCallbackEvent="answered").
    if (field(params, 'CallStatus') === 'in-progress' && field(params, 'ParentCallSid')) {
      return { outcome: 'answered', final: false, detail: { dial_call_sid: field(params, 'CallSid') } };
    }
    return null;
  },

  hangup() {
    const response = new VoiceResponse();
    response.hangup();
    return twiml(response.toString());
  },

  warm: twilioWarmTransfer,
};
