/**
 * The dial callbacks of a cold transfer (docs/phone-operations.md#transfer-to-a-human), for every vendor that
 * can transfer (its server half's `transfer`), public like the other telephony webhooks and
 * authenticated by the vendor's own check:
 *
 * - /telephony/{provider}/transfer/{call_id}: the dial ended (Twilio `<Dial action>`, Plivo
 *   `<Dial action>`). The outcome goes to the call workflow (`transferEvent`); the answer says what
 *   the call does next: a dial that reached nobody (busy, no answer, failed) reconnects the caller
 *   to the media gateway — the agent carries on — anything else hangs up.
 * - /telephony/{provider}/transfer/{call_id}/events: the dialled leg's progress (answered = the
 *   hand-over; the call ends `completed` / `transferred`).
 * - /telephony/{provider}/transfer/{call_id}/dial?to=…|sip=…: the dial document, for vendors that
 *   transfer a call to a URL (Plivo's aleg_url).
 */
import type { Request } from 'express';
import { z } from 'zod';
import type { ApiContext } from '../context';
import { HttpError, notFound } from '../errors';
import { callFinder, send, webhookAuthenticator } from '../telephony/webhook-auth';
import { route, type AnyRoute } from '../route';
import { FINAL_CALL_STATUSES, streamConnection } from '../../calls/telephony-calls';
import { transferUrls } from '../../calls/call-transfer';
import { callCapableProviders, telephonyVendor } from '../../providers/telephony/registry';
import { E164, SIP_URI, type TransferTarget } from '../../shared/transfer';
import { transferSignaller } from '../telephony/transfer-signal';

const TAG = 'Telephony webhooks';
const FAILED = new Set(['busy', 'no_answer', 'failed', 'canceled']);

export function telephonyTransferRoutes(ctx: ApiContext): AnyRoute[] {
  const { config, log, jwtSecret } = ctx;

  /** The vendor (one that can transfer) after it authenticated the request, and the call. */
  const vendorAuthenticated = webhookAuthenticator(ctx);
  const findCall = callFinder(ctx);
  async function authenticated(provider: string, callId: string, req: Request) {
    if (!(await telephonyVendor(provider))?.transfer) throw notFound(`Telephony provider ${provider} with transfer`);
    const { vendor, publicBaseUrl, request } = await vendorAuthenticated(provider, req, 'transfer webhook');
    const call = await findCall(callId);
    if (!call || call.provider !== vendor.name) throw notFound(`Call ${callId}`);
    return { vendor, transfer: vendor.transfer!, publicBaseUrl, request, call };
  }

  const tell = transferSignaller(ctx);

  const params = z.object({
    provider: z.string().describe(`the telephony provider: ${callCapableProviders().join(', ')}`),
    call_id: z.string().describe('the call id (UUID) from the URL given to the provider'),
  });
  const common = { 403: { description: "The request failed the vendor's authentication" }, 404: { description: 'Unknown call, or a provider without transfer' } };

  const routes = [
    route({
      method: 'post',
      path: '/telephony/{provider}/transfer/{call_id}',
      operationId: 'postTransferDialAction',
      tag: TAG,
      public: true,
      summary: 'End of a transfer dial (the dial action URL)',
      description:
        "The vendor's dial of a transfer ended. The outcome goes to the call workflow: busy, no answer or failed (the destination was not reached) answers a document that connects the caller to the media gateway again, and the agent tells them and carries on; completed (the transferred conversation is over) answers a hang-up.",
      params,
      responses: { 200: { description: "The vendor's document: a stream back to the agent, or a hang-up", contentType: 'text/xml' }, ...common, 503: { description: 'The call workflow could not be reached' } },
      async handler({ req, res, params: p }) {
        const { vendor, transfer, publicBaseUrl, request, call } = await authenticated(p.provider, p.call_id, req);
        const report = transfer.report(request);
        if (!report) return send(res, transfer.hangup());
        const delivered = await tell(call.id, { outcome: report.outcome, detail: report.detail });
        const comesBack = FAILED.has(report.outcome) && delivered && !FINAL_CALL_STATUSES.has(call.status);
        log.info('transfer dial ended', { call_id: call.id, provider: vendor.name, outcome: report.outcome, back_to_agent: comesBack });
        if (comesBack) return send(res, vendor.webhooks.connect(streamConnection(config, publicBaseUrl, vendor.name, jwtSecret, call.id), { config }));
        send(res, transfer.hangup());
      },
    }),
    route({
      method: 'post',
      path: '/telephony/{provider}/transfer/{call_id}/events',
      operationId: 'postTransferDialEvents',
      tag: TAG,
      public: true,
      summary: 'Progress of a transfer dial',
      description: 'The dialled leg answered: the caller is handed over, and the call ends `completed` with end_reason `transferred` (event transfer_completed).',
      params,
      responses: { 204: { description: 'Accepted (also for progress that is not an answer)' }, ...common, 503: { description: 'The call workflow could not be reached' } },
      async handler({ req, res, params: p }) {
        const { transfer, request, call } = await authenticated(p.provider, p.call_id, req);
        const report = transfer.report(request);
        if (report?.outcome === 'answered') await tell(call.id, { outcome: 'answered', detail: report.detail });
        res.status(204).end();
      },
    }),
    route({
      method: 'post',
      path: '/telephony/{provider}/transfer/{call_id}/dial',
      operationId: 'postTransferDialDocument',
      tag: TAG,
      public: true,
      summary: 'Dial document of a transfer',
      description: "For vendors that transfer a call to a URL (the live call is pointed at this document): the document dialling `to` (E.164) or `sip` with the transfer's callback URLs.",
      params,
      query: z.object({ to: z.string().optional(), sip: z.string().optional() }),
      responses: { 200: { description: "The vendor's dial document", contentType: 'text/xml' }, 422: { description: 'to / sip missing or malformed' }, ...common },
      async handler({ req, res, params: p, query }) {
        const { transfer, publicBaseUrl, call, vendor } = await authenticated(p.provider, p.call_id, req);
        let target: TransferTarget;
        if (query.to && E164.test(query.to)) target = { phoneNumber: query.to };
        else if (query.sip && SIP_URI.test(query.sip)) target = { sipUri: query.sip };
        else throw new HttpError(422, 'to must be an E.164 number or sip a SIP URI');
        send(res, transfer.dialDocument({ target, ringTimeoutSecs: config.RING_TIMEOUT_SECS, ...transferUrls(publicBaseUrl, vendor.name, call.id, target) }));
      },
    }),
  ];
  return routes.flatMap((r) => [r, { ...r, method: 'get' as const, operationId: r.operationId.replace(/^post/, 'get'), summary: `${r.summary} (GET)` }]);
}
