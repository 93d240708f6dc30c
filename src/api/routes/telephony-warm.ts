/**
 * The vendor callbacks of a warm transfer (docs/phone-operations.md#warm-transfer), public like
 * the other telephony webhooks and authenticated by the vendor's own check:
 *
 * - /telephony/{provider}/warm/{call_id}/hold?audio=…: the caller's hold document: the audio on a
 *   loop (the conference's wait URL), or where the vendor moves the caller's leg to this URL
 *   (Plivo), the conference itself, whose wait sound is this URL again;
 * - …/answer: the human's call answered. A machine (the vendor's synchronous detection) is
 *   `voicemail` for the workflow and a hang-up; a person is connected to the media gateway as a
 *   new stream of the call: the agent's briefing;
 * - …/events: the human's call status (busy, no answer, failed, its end);
 * - …/return: the caller's leg comes back to the agent (a new stream of the call);
 * - …/join: the destination's leg enters the caller's conference, for vendors that move a leg to a
 *   URL (Plivo's Transfer Call API);
 * - /telephony/{provider}/hold-tone.wav: the built-in hold audio (`hold_audio: "tone"`).
 */
import { z } from 'zod';
import type { ApiContext } from '../context';
import { HttpError, notFound } from '../errors';
import { callFinder, send, webhookAuthenticator } from '../telephony/webhook-auth';
import { route, type AnyRoute } from '../route';
import { FINAL_CALL_STATUSES, streamConnection } from '../../calls/telephony-calls';
import { conferenceName, holdTonePath } from '../../calls/warm-transfer';
import { publicRequestUrl } from '../../providers/telephony/public-url';
import { holdToneWav } from '../../audio/hold-tone';
import { callCapableProviders, telephonyVendor } from '../../providers/telephony/registry';
import type { Request } from 'express';
import { transferSignaller } from '../telephony/transfer-signal';

const TAG = 'Telephony webhooks';

export function telephonyWarmRoutes(ctx: ApiContext): AnyRoute[] {
  const { config, log, jwtSecret } = ctx;
  const vendorAuthenticated = webhookAuthenticator(ctx);
  const findCall = callFinder(ctx);
  const tell = transferSignaller(ctx);

  async function authenticated(provider: string, callId: string, req: Request) {
    if (!(await telephonyVendor(provider))?.transfer?.warm) throw notFound(`Telephony provider ${provider} with warm transfer`);
    const { vendor, publicBaseUrl, request } = await vendorAuthenticated(provider, req, 'warm transfer webhook');
    const call = await findCall(callId);
    if (!call || call.provider !== vendor.name) throw notFound(`Call ${callId}`);
    return { vendor, transfer: vendor.transfer!, warm: vendor.transfer!.warm!, publicBaseUrl, request, call };
  }

  const params = z.object({
    provider: z.string().describe(`the telephony provider: ${callCapableProviders().join(', ')}`),
    call_id: z.string().describe('the call id (UUID) from the URL given to the provider'),
  });
  const common = { 403: { description: "The request failed the vendor's authentication" }, 404: { description: 'Unknown call, or a provider without warm transfer' } };
  const xml = (description: string) => ({ description, contentType: 'text/xml' });

  const routes = [
    route({
      method: 'post',
      path: '/telephony/{provider}/warm/{call_id}/hold',
      operationId: 'postWarmTransferHold',
      tag: TAG,
      public: true,
      summary: 'Hold document of a warm transfer',
      description:
        "What the caller hears while the agent briefs the destination: `audio` played on a loop (the conference's wait URL), or for vendors that move the caller's leg to this URL, the conference document whose wait sound is this URL again (docs/phone-operations.md, Warm transfer per vendor).",
      params,
      query: z.object({
        audio: z.string().optional(),
        wait: z.string().optional().describe("`1` on the conference's wait-sound URL (the same route, for vendors whose conference takes its wait sound as a document URL): the audio document"),
      }),
      responses: { 200: xml("The vendor's hold document"), 422: { description: 'audio missing or not an http(s) URL' }, ...common },
      async handler({ req, res, params: p, query }) {
        const { warm, publicBaseUrl, call } = await authenticated(p.provider, p.call_id, req);
        if (!query.audio || !/^https?:\/\/\S+$/i.test(query.audio)) throw new HttpError(422, 'audio must be an http(s) URL');
        send(res, warm.holdDocument(query.audio, { conferenceName: conferenceName(call.id), url: publicRequestUrl(publicBaseUrl, req.originalUrl) }));
      },
    }),
    route({
      method: 'post',
      path: '/telephony/{provider}/warm/{call_id}/answer',
      operationId: 'postWarmTransferAnswer',
      tag: TAG,
      public: true,
      summary: "The destination answered a warm transfer's call",
      description:
        "A person: the answer connects them to the media gateway as a new stream of the call, where the agent briefs them. An answering machine (the vendor's detection): the call workflow is told (the caller comes back to the agent) and the answer hangs up.",
      params,
      responses: { 200: xml("The vendor's document: a stream to the agent, or a hang-up"), ...common, 503: { description: 'The call workflow could not be reached' } },
      async handler({ req, res, params: p }) {
        const { vendor, transfer, warm, publicBaseUrl, request, call } = await authenticated(p.provider, p.call_id, req);
        const report = warm.humanReport(request);
        if (report?.outcome === 'voicemail') {
          await tell(call.id, { outcome: 'voicemail', detail: { ...report.detail, human_call_id: report.humanCallId } });
          return send(res, transfer.hangup());
        }
        if (FINAL_CALL_STATUSES.has(call.status)) return send(res, transfer.hangup());
        const humanCallId = report?.humanCallId ?? null;
        const delivered = await tell(call.id, { outcome: 'answered', detail: { human_call_id: humanCallId } });
        log.info('warm transfer answered', { call_id: call.id, provider: vendor.name, briefing: delivered });
        if (!delivered) return send(res, transfer.hangup());
        send(res, vendor.webhooks.connect(streamConnection(config, publicBaseUrl, vendor.name, jwtSecret, call.id), { config }));
      },
    }),
    route({
      method: 'post',
      path: '/telephony/{provider}/warm/{call_id}/events',
      operationId: 'postWarmTransferEvents',
      tag: TAG,
      public: true,
      summary: "Status of a warm transfer's call to the destination",
      description: "Busy, no answer, failed or ended: the call workflow is told; before the hand-over, the caller comes back to the agent.",
      params,
      responses: { 204: { description: 'Accepted (also for progress that is not an end)' }, ...common, 503: { description: 'The call workflow could not be reached' } },
      async handler({ req, res, params: p }) {
        const { warm, request, call } = await authenticated(p.provider, p.call_id, req);
        const report = warm.humanReport(request);
        if (report && report.outcome !== 'answered') await tell(call.id, { outcome: report.outcome, detail: { ...report.detail, human_call_id: report.humanCallId } });
        res.status(204).end();
      },
    }),
    route({
      method: 'post',
      path: '/telephony/{provider}/warm/{call_id}/return',
      operationId: 'postWarmTransferReturn',
      tag: TAG,
      public: true,
      summary: 'The caller comes back from hold',
      description: 'A warm transfer that did not happen: the caller is connected to the media gateway again (a new stream of the call) and the agent carries on; a call that has ended hangs up.',
      params,
      responses: { 200: xml("The vendor's document: a stream back to the agent, or a hang-up"), ...common },
      async handler({ req, res, params: p }) {
        const { vendor, transfer, publicBaseUrl, call } = await authenticated(p.provider, p.call_id, req);
        if (FINAL_CALL_STATUSES.has(call.status)) return send(res, transfer.hangup());
        send(res, vendor.webhooks.connect(streamConnection(config, publicBaseUrl, vendor.name, jwtSecret, call.id), { config }));
      },
    }),
    route({
      method: 'post',
      path: '/telephony/{provider}/warm/{call_id}/join',
      operationId: 'postWarmTransferJoin',
      tag: TAG,
      public: true,
      summary: 'The destination enters the caller\'s conference',
      description:
        "The hand-over of a warm transfer, for vendors that move the destination's leg to a URL with a transfer API: the conference document that starts the caller's conference.",
      params,
      responses: { 200: xml("The vendor's conference document, or a hang-up once the call has ended"), ...common },
      async handler({ req, res, params: p }) {
        const { warm, transfer, call } = await authenticated(p.provider, p.call_id, req);
        if (!warm.joinDocument) throw notFound(`Telephony provider ${p.provider} with a join URL`);
        // A caller who hung up meanwhile ended the conference: the destination would wait alone.
        if (FINAL_CALL_STATUSES.has(call.status) && call.end_reason !== 'transferred') return send(res, transfer.hangup());
        send(res, warm.joinDocument(conferenceName(call.id)));
      },
    }),
  ];
  const tone = route({
    method: 'get',
    path: holdTonePath('{provider}'),
    operationId: 'getHoldTone',
    tag: TAG,
    public: true,
    summary: 'The built-in hold audio',
    description: 'A soft chime (8 kHz 16-bit PCM WAV, 4 s), played on a loop by the vendor to a caller on hold during a warm transfer whose destination has `hold_audio: "tone"`.',
    params: z.object({ provider: params.shape.provider }),
    responses: { 200: { description: 'The WAV file', contentType: 'audio/wav' }, 404: { description: 'A provider without warm transfer' } },
    async handler({ res, params: p }) {
      if (!(await telephonyVendor(p.provider))?.transfer?.warm) throw notFound(`Telephony provider ${p.provider} with warm transfer`);
      res.status(200).set({ 'Content-Type': 'audio/wav', 'Cache-Control': 'public, max-age=86400' }).send(holdToneWav());
    },
  });
  return [...routes.flatMap((r) => [r, { ...r, method: 'get' as const, operationId: r.operationId.replace(/^post/, 'get'), summary: `${r.summary} (GET)` }]), tone];
}
