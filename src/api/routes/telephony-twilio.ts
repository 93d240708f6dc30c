/**
 * The public endpoints Twilio calls (no bearer token; every request must carry a valid
 * X-Twilio-Signature made with the stored Auth Token over the public URL):
 *
 * - POST /telephony/twilio/inbound/{agent_name}: an incoming call → TwiML connecting its audio to
 *   the media gateway, or a refusal.
 * - POST /telephony/twilio/twiml/{call_id}: an outbound call was answered → the same TwiML.
 * - POST /telephony/twilio/status[/{call_id}]: status callbacks → the call workflow's
 *   telephonyStatus signal.
 *
 * Twilio plays only what a 200 answer says: a non-2xx answer to a voice webhook makes it say "an
 * application error has occurred". So every decision about a call (refusals included) is 200 with
 * TwiML; only a request that is not from Twilio (bad signature) gets 403 JSON.
 */
import type { Request, Response } from 'express';
import { z } from 'zod';
import type { ApiContext } from '../context';
import { forbidden } from '../errors';
import { route } from '../route';
import { plain } from '../../db/database';
import type { CallRow } from '../../db/models';
import { CallError, startCall, type CallDeps } from '../../calls/call-service';
import { CapacityError, capacityCheck } from '../../calls/concurrency';
import {
  callStreamTwiml,
  FINAL_CALL_STATUSES,
  signalTelephonyStatus,
  twilioSignalStatus,
  twilioStreamUrl,
} from '../../calls/telephony-calls';
import { TWILIO_SIGNATURE_HEADER, publicRequestUrl, validateTwilioHttpRequest } from '../../providers/telephony/twilio/signature';
import { parseTwilioStatusCallback } from '../../providers/telephony/twilio/status';
import { rejectTwiml, sayAndHangupTwiml } from '../../providers/telephony/twilio/twiml';
import { effectivePublicBaseUrl, loadTelephonySettings } from '../telephony/settings-store';

export const BUSY_MESSAGE = 'Sorry, all our agents are busy right now. Please call again later. Goodbye.';
export const UNAVAILABLE_MESSAGE = 'Sorry, we cannot take your call right now. Please try again later. Goodbye.';
export const CALL_GONE_MESSAGE = 'Sorry, this call can no longer be connected. Goodbye.';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TAG = 'Telephony (Twilio)';
const TWIML = { description: 'TwiML', contentType: 'text/xml' };
const FORBIDDEN = { description: 'Missing or wrong X-Twilio-Signature, or no Twilio Auth Token configured to check it' };

type Form = Record<string, string>;

/** The form fields as single strings (Twilio never repeats a field in webhooks). */
function formOf(body: unknown): Form {
  const out: Form = {};
  if (body && typeof body === 'object') {
    for (const [k, v] of Object.entries(body)) out[k] = Array.isArray(v) ? String(v[v.length - 1]) : String(v);
  }
  return out;
}

function sendTwiml(res: Response, xml: string): void {
  res.status(200).type('text/xml').send(xml);
}

export function twilioTelephonyRoutes(ctx: ApiContext) {
  const { db, box, config, temporal, log, jwtSecret } = ctx;
  const deps: CallDeps = { config, db, temporal };
  const { Agent, Call, TelephonyEndpoint } = db.models;

  /** Checks the signature; returns the settings and public base URL it was checked against. */
  async function verifyTwilio(req: Request) {
    const settings = await loadTelephonySettings(db, box);
    const baseUrl = effectivePublicBaseUrl(settings, config);
    const authToken = settings.twilio.auth_token;
    if (!authToken) {
      log.warn('twilio request refused: no twilio_auth_token configured to check its signature', { path: req.path });
      throw forbidden('Twilio is not configured: no twilio_auth_token to check X-Twilio-Signature with');
    }
    if (!req.headers[TWILIO_SIGNATURE_HEADER]) throw forbidden('Missing X-Twilio-Signature');
    if (!validateTwilioHttpRequest(req, { authToken, publicBaseUrl: baseUrl })) {
      // Usually public_base_url differs from the URL given to Twilio (scheme, host, port or prefix).
      log.warn('twilio signature mismatch', { path: req.path, checked_url: publicRequestUrl(baseUrl, req.originalUrl) });
      throw forbidden('Invalid X-Twilio-Signature');
    }
    return { settings, baseUrl };
  }

  const findCall = async (callId: string): Promise<CallRow | null> =>
    UUID.test(callId) ? plain(await Call.findByPk(callId)) : null;

  /** Records the provider's call SID on a call that does not have it yet (a callback won the race). */
  const rememberSid = async (call: CallRow, callSid: string | undefined) => {
    if (callSid && !call.provider_call_sid) await Call.update({ provider_call_sid: callSid }, { where: { id: call.id, provider_call_sid: null } });
  };

  const streamTwimlFor = (callId: string, baseUrl: string) => callStreamTwiml(twilioStreamUrl(config, baseUrl), jwtSecret, callId);

  async function inbound(req: Request, res: Response, agentName: string) {
    const { settings, baseUrl } = await verifyTwilio(req);
    const form = formOf(req.body);
    const fields = { agent_name: agentName, call_sid: form.CallSid, from: form.From, to: form.To };
    if (!(await Agent.findOne({ where: { name: agentName }, attributes: ['id'] }))) {
      log.warn('inbound call refused: unknown agent', fields);
      return sendTwiml(res, rejectTwiml('rejected'));
    }
    if (form.To) {
      const endpoint = plain(await TelephonyEndpoint.findOne({ where: { phone_number: form.To, provider: 'twilio' } }));
      if (endpoint && !endpoint.is_active) {
        log.info('inbound call refused: endpoint is inactive', { ...fields, endpoint_id: endpoint.id });
        return sendTwiml(res, rejectTwiml('rejected'));
      }
    }
    if (form.CallSid) {
      // Twilio asking again for the same call (a retried webhook): same answer, no second call.
      const existing = plain(await Call.findOne({ where: { provider: 'twilio', provider_call_sid: form.CallSid } }));
      if (existing) {
        return sendTwiml(res, FINAL_CALL_STATUSES.has(existing.status) ? rejectTwiml('rejected') : streamTwimlFor(existing.id, baseUrl));
      }
    }
    let callId: string;
    try {
      ({ callId } = await startCall(deps, {
        agentName,
        phoneNumber: form.From || 'anonymous',
        direction: 'inbound',
        channel: 'voice',
        metadata: { to_number: form.To ?? null },
        initialStatus: 'ringing',
        provider: 'twilio',
        providerCallSid: form.CallSid || undefined,
        admit: capacityCheck(db, 'twilio', settings.twilio.max_concurrent),
      }));
    } catch (err) {
      if (err instanceof CapacityError) {
        log.info('inbound call refused: over max_concurrent', { ...fields, max_concurrent: err.maxConcurrent });
        return sendTwiml(res, sayAndHangupTwiml(BUSY_MESSAGE));
      }
      if (err instanceof CallError) {
        log.error('inbound call could not be started', { ...fields, error: err.message });
        return sendTwiml(res, err.status === 404 ? rejectTwiml('rejected') : sayAndHangupTwiml(UNAVAILABLE_MESSAGE));
      }
      throw err;
    }
    log.info('inbound call', { ...fields, call_id: callId });
    sendTwiml(res, streamTwimlFor(callId, baseUrl));
  }

  async function status(req: Request, res: Response, callId: string | null) {
    await verifyTwilio(req);
    const form = formOf(req.body);
    const update = parseTwilioStatusCallback(form);
    const signalStatus = update ? twilioSignalStatus(update.providerStatus) : null;
    const call = callId
      ? await findCall(callId)
      : form.CallSid
        ? plain(await Call.findOne({ where: { provider: 'twilio', provider_call_sid: form.CallSid } }))
        : null;
    if (!update || !signalStatus || !call) {
      log.debug('twilio status callback ignored', { call_id: callId, call_sid: form.CallSid, status: form.CallStatus, known_call: !!call });
      res.status(204).end();
      return;
    }
    await rememberSid(call, update.providerCallId ?? undefined);
    const detail: Record<string, unknown> = { provider: 'twilio', provider_status: update.providerStatus, call_sid: update.providerCallId };
    if (update.sequenceNumber !== undefined) detail.sequence_number = update.sequenceNumber;
    if (update.durationSecs !== undefined) detail.duration = update.durationSecs;
    if (form.SipResponseCode) detail.sip_response_code = form.SipResponseCode;
    if (form.ErrorCode) detail.error_code = form.ErrorCode;
    if (form.ErrorMessage) detail.error = form.ErrorMessage;
    try {
      await signalTelephonyStatus(temporal, call.id, { status: signalStatus, detail });
    } catch (err) {
      log.error('could not deliver a twilio status to the call workflow', { call_id: call.id, status: signalStatus, error: err });
      res.status(503).json({ detail: 'The call workflow could not be reached' });
      return;
    }
    res.status(204).end();
  }

  const callIdParam = z.object({ call_id: z.string().describe('the call id (UUID) from the URL given to Twilio') });

  return [
    route({
      method: 'post',
      path: '/telephony/twilio/inbound/{agent_name}',
      tag: TAG,
      public: true,
      summary: 'Twilio voice webhook for incoming calls',
      description: [
        "Configure it in the Twilio Console as the number's \"A call comes in\" webhook (HTTP POST); it is the endpoint's `inbound_webhook_url`.",
        'Form fields from Twilio (CallSid, From, To…), signed with X-Twilio-Signature.',
        'Answers TwiML: `<Connect><Stream>` to the media gateway (parameters `call_id` and `token`) and creates the call (`inbound`, `ringing`, phone_number = From).',
        'Refusals are TwiML too, because Twilio only plays a 200 answer: `<Reject reason="rejected"/>` (not answered, not billed) for an unknown agent or an inactive endpoint of the called number;',
        '`<Say>` "all our agents are busy" + `<Hangup/>` when `twilio_max_concurrent` calls are active.',
      ].join(' '),
      params: z.object({ agent_name: z.string().describe('agent answering the call') }),
      responses: { 200: TWIML, 403: FORBIDDEN },
      async handler({ req, res, params }) {
        await inbound(req, res, params.agent_name);
      },
    }),
    route({
      method: 'post',
      path: '/telephony/twilio/twiml/{call_id}',
      tag: TAG,
      public: true,
      summary: 'TwiML for an answered outbound call',
      description:
        'Twilio fetches it when the callee answers (the `Url` of the call). Answers `<Connect><Stream>` to the media gateway; for an unknown or already finished call, a short `<Say>` and `<Hangup/>`.',
      params: callIdParam,
      responses: { 200: TWIML, 403: FORBIDDEN },
      async handler({ req, res, params }) {
        const { baseUrl } = await verifyTwilio(req);
        const call = await findCall(params.call_id);
        if (!call || call.provider !== 'twilio' || FINAL_CALL_STATUSES.has(call.status)) {
          log.warn('twilio fetched TwiML for a call that cannot be connected', { call_id: params.call_id, status: call?.status ?? null });
          return sendTwiml(res, sayAndHangupTwiml(CALL_GONE_MESSAGE));
        }
        await rememberSid(call, formOf(req.body).CallSid);
        sendTwiml(res, streamTwimlFor(call.id, baseUrl));
      },
    }),
    route({
      method: 'post',
      path: '/telephony/twilio/status/{call_id}',
      tag: TAG,
      public: true,
      summary: 'Twilio status callback of a call',
      description:
        "The `StatusCallback` of outbound calls. `CallStatus` moves the call: queued/initiated/ringing → ringing, in-progress → in_progress, completed → completed, busy/no-answer/canceled → no_answer, failed → failed; each callback is recorded as a `call_status` event with Twilio's status word. Out-of-order and repeated callbacks never move a call backwards. Always 204, also for unknown calls.",
      params: callIdParam,
      responses: { 204: { description: 'Accepted' }, 403: FORBIDDEN, 503: { description: 'The call workflow could not be reached' } },
      async handler({ req, res, params }) {
        await status(req, res, params.call_id);
      },
    }),
    route({
      method: 'post',
      path: '/telephony/twilio/status',
      tag: TAG,
      public: true,
      summary: 'Twilio status callback, call found by CallSid',
      description:
        'For a number\'s "Call status changes" URL in the Twilio Console (inbound calls): the call is found by its `CallSid`. Same behaviour as /telephony/twilio/status/{call_id}.',
      responses: { 204: { description: 'Accepted' }, 403: FORBIDDEN, 503: { description: 'The call workflow could not be reached' } },
      async handler({ req, res }) {
        await status(req, res, null);
      },
    }),
  ];
}
