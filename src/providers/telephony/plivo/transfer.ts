/**
 * Cold transfer on Plivo (plivo.com/docs/voice/api/call#transfer-a-call): `POST
 * /Account/{auth_id}/Call/{call_uuid}/` with `legs=aleg` and `aleg_url` moves the live call to the
 * XML our dial URL answers — `<Dial action callbackUrl>` with a `<Number>` or a SIP `<User>`. The
 * running `<Stream>` ends (our media stream closes). The Dial `callbackUrl` gets `DialAction=answer`
 * when the destination picks up (the hand-over); the `action` URL gets `DialStatus` when the dial
 * ends — busy / no-answer / timeout / failed come back to the agent (we answer a new `<Stream>`).
 */
import { Response } from 'plivo';
import type { TransferOutcome } from '../../../shared/transfer';
import type { HttpAnswer, TransferReport, TransferSupport } from '../types';
import { field, webhookParams } from '../webhook-fields';
import { callsFor, toProviderError, type PlivoCredentials } from './client';
import { e164ToPlivoNumber } from './webhooks';
import { plivoWarmTransfer } from './warm';

interface PlivoDialElement {
  addNumber(body: string, attributes?: Record<string, string>): unknown;
  addUser(body: string, attributes?: Record<string, string>): unknown;
}
interface PlivoXmlResponse {
  addDial(attributes: Record<string, string | number>): PlivoDialElement;
  addHangup(attributes: Record<string, string>): unknown;
  toXML(): string;
}
const response = () => (Response as unknown as () => PlivoXmlResponse)();
const xml = (body: string): HttpAnswer => ({ status: 200, contentType: 'text/xml', body });

const DIAL_STATUS: Record<string, TransferOutcome> = {
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'no_answer',
  timeout: 'no_answer',
  failed: 'failed',
};

export const plivoTransfer: TransferSupport<PlivoCredentials> = {
  async start(creds, callUuid, req) {
    try {
      await callsFor(creds).transfer(callUuid, { legs: 'aleg', alegUrl: req.dialUrl, alegMethod: 'POST' });
    } catch (err) {
      throw toProviderError(err);
    }
  },

  dialDocument({ target, actionUrl, eventsUrl, ringTimeoutSecs }) {
    const r = response();
    const dial = r.addDial({ action: actionUrl, method: 'POST', callbackUrl: eventsUrl, callbackMethod: 'POST', timeout: Math.max(5, Math.round(ringTimeoutSecs)) });
    if (target.phoneNumber) dial.addNumber(e164ToPlivoNumber(target.phoneNumber));
    else dial.addUser(target.sipUri!);
    return xml(r.toXML());
  },

  report(req): TransferReport | null {
    const params = webhookParams(req);
    const dialStatus = field(params, 'DialStatus');
    if (dialStatus) {
      const outcome = DIAL_STATUS[dialStatus];
      if (!outcome) return null;
      const detail: Record<string, unknown> = { provider_status: dialStatus };
      const bleg = field(params, 'DialBLegUUID');
      if (bleg) detail.dial_call_uuid = bleg;
      const cause = field(params, 'DialHangupCause');
      if (cause) detail.hangup_cause = cause;
      return { outcome, final: true, detail };
    }
    if (field(params, 'DialAction') === 'answer') return { outcome: 'answered', final: false, detail: { dial_call_uuid: field(params, 'DialBLegUUID') } };
    return null;
  },

  hangup() {
    const r = response();
    r.addHangup({});
    return xml(r.toXML());
  },

  warm: plivoWarmTransfer,
};
