/**
 * The public endpoints phone companies call, for every vendor in the registry (no bearer token;
 * each vendor authenticates its own requests, e.g. by a signature):
 *
 * Each also answers GET (parameters in the query string) for vendors that call that way.
 *
 * - POST /telephony/{provider}/inbound/{agent_name}: an incoming call → the vendor's document
 *   connecting its audio to the media gateway, or a refusal.
 * - POST /telephony/{provider}/answer/{call_id}: an outbound call was answered → the same document
 *   (a vendor's legacyAnswerPaths are served the same way).
 * - POST /telephony/{provider}/status[/{call_id}]: status and hang-up callbacks → the call
 *   workflow's telephonyStatus signal.
 *
 * Decisions about a call (refusals included) are answered in the form the vendor acts on (some
 * vendors only play a 200 document). A request that is not a well-formed webhook of the vendor is answered
 * 4xx `{detail}`: unknown provider 404, failed authentication 403, no call id 400, malformed
 * fields 422 — never a 500.
 */
import type { Request, Response } from 'express';
import { z } from 'zod';
import { machineDetectionRoute } from '../telephony/machine-detection';
import { callFinder, send, webhookAuthenticator } from '../telephony/webhook-auth';
import type { ApiContext } from '../context';
import { HttpError } from '../errors';
import { plain } from '../../db/database';
import type { CallRow } from '../../db/models';
import { route, type AnyRoute } from '../route';
import type { CallDeps } from '../../calls/call-service';
import { admitInboundCall } from '../../calls/inbound-calls';
import { FINAL_CALL_STATUSES, signalTelephonyStatus, streamConnection } from '../../calls/telephony-calls';
import { callCapableProviders, telephonyDescriptors } from '../../providers/telephony/registry';
import { WebhookInputError, type TelephonyVendor } from '../../providers/telephony/types';

export const BUSY_MESSAGE = 'Sorry, all our agents are busy right now. Please call again later. Goodbye.';
export const UNAVAILABLE_MESSAGE = 'Sorry, we cannot take your call right now. Please try again later. Goodbye.';
export const CALL_GONE_MESSAGE = 'Sorry, this call can no longer be connected. Goodbye.';

const TAG = 'Telephony webhooks';
const answerFormats = () => telephonyDescriptors().map((v) => `${v.label}: ${v.answerFormat}`).join('; ');
const documentResponse = () => ({ description: `The vendor's document (${answerFormats()})`, contentType: 'text/xml' });
const FORBIDDEN = { description: "The request failed the vendor's authentication (e.g. a missing or wrong signature)" };
const NOT_FOUND = { description: 'Unknown or unsupported provider' };
const INPUT_ERRORS = {
  400: { description: 'Not a webhook of this vendor: no provider call id' },
  422: { description: 'Malformed fields (numbers not E.164, oversized values)' },
};

const providerParam = () =>
  z.string().describe(`the telephony provider: ${callCapableProviders().join(', ')}`);

/** Runs a vendor's parser; its WebhookInputError becomes the 4xx `{detail}` answer. */
function parsed<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof WebhookInputError) throw new HttpError(err.status, err.detail);
    throw err;
  }
}

export function telephonyRoutes(ctx: ApiContext): AnyRoute[] {
  const { db, config, temporal, log, jwtSecret } = ctx;
  const deps: CallDeps = { config, db, temporal };
  const { Call } = db.models;

  /** The vendor of the URL, after it authenticated the request. */
  const authenticated = webhookAuthenticator(ctx);
  const findCall = callFinder(ctx);

  /** Records the provider's call id on a call (a callback may carry the id before the dial answer does). */
  const rememberProviderCallId = async (call: CallRow, providerCallId: string | null) => {
    if (providerCallId && call.provider_call_sid !== providerCallId) await Call.update({ provider_call_sid: providerCallId }, { where: { id: call.id } });
  };

  const connect = (vendor: TelephonyVendor, publicBaseUrl: string, callId: string) =>
    vendor.webhooks.connect(streamConnection(config, publicBaseUrl, vendor.name, jwtSecret, callId), { config });

  async function inbound(provider: string, agentName: string, req: Request, res: Response) {
    const { vendor, settings, publicBaseUrl, request } = await authenticated(provider, req);
    const call = parsed(() => vendor.webhooks.inboundCall(request));
    const decision = await admitInboundCall(
      { ...deps, log },
      { provider: vendor.name, ...call, urlAgentName: agentName, maxConcurrent: Number(settings.vendors[vendor.name]?.max_concurrent) },
    );
    switch (decision.kind) {
      case 'connect':
        return send(res, connect(vendor, publicBaseUrl, decision.callId));
      case 'reject':
        return send(res, vendor.webhooks.reject());
      case 'busy':
        return send(res, vendor.webhooks.sayAndHangup(BUSY_MESSAGE));
      case 'at_capacity':
        return send(res, vendor.webhooks.busy());
      case 'unavailable':
      case 'unready':
        return send(res, vendor.webhooks.sayAndHangup(UNAVAILABLE_MESSAGE));
    }
  }

  async function answer(provider: string, callId: string, req: Request, res: Response) {
    const { vendor, publicBaseUrl, request } = await authenticated(provider, req);
    const call = await findCall(callId);
    if (!call || call.provider !== vendor.name || FINAL_CALL_STATUSES.has(call.status)) {
      log.warn('the provider fetched the answer of a call that cannot be connected', { provider, call_id: callId, status: call?.status ?? null });
      return send(res, vendor.webhooks.sayAndHangup(CALL_GONE_MESSAGE));
    }
    await rememberProviderCallId(call, vendor.webhooks.providerCallId(request));
    send(res, connect(vendor, publicBaseUrl, call.id));
  }

  async function status(provider: string, callId: string | null, req: Request, res: Response) {
    const { vendor, request } = await authenticated(provider, req);
    const update = parsed(() => vendor.webhooks.statusUpdate(request));
    const call = callId
      ? await findCall(callId)
      : update?.providerCallId
        ? plain(await Call.findOne({ where: { provider: vendor.name, provider_call_sid: update.providerCallId } }))
        : null;
    if (!update?.status || !call || call.provider !== vendor.name) {
      log.debug('status callback ignored', { provider, call_id: callId, status: update?.providerStatus, known_call: !!call });
      res.status(204).end();
      return;
    }
    await rememberProviderCallId(call, update.providerCallId);
    const detail: Record<string, unknown> = { provider: vendor.name, provider_status: update.providerStatus, call_sid: update.providerCallId };
    if (update.sequenceNumber !== undefined) detail.sequence_number = update.sequenceNumber;
    if (update.durationSecs !== undefined) detail.duration = update.durationSecs;
    Object.assign(detail, update.detail);
    try {
      // A call the record says is over has no workflow to wake (a late callback): a plain signal.
      const taskQueue = FINAL_CALL_STATUSES.has(call.status) ? undefined : config.TEMPORAL_TASK_QUEUE;
      await signalTelephonyStatus(temporal, call.id, { status: update.status, detail }, taskQueue);
    } catch (err) {
      log.error('could not deliver a provider status to the call workflow', { call_id: call.id, status: update.status, error: err });
      res.status(503).json({ detail: 'The call workflow could not be reached' });
      return;
    }
    res.status(204).end();
  }

  const machine = machineDetectionRoute({ temporal, log, findCall, authenticated, parsed });

  const callIdParam = z.string().describe('the call id (UUID) from the URL given to the provider');
  const ANSWER_DESCRIPTION =
    'The provider fetches it when the callee answers (the answer URL of the call). Answers the document that connects the stream to the media gateway; for an unknown or already finished call, a short message and a hang-up.';
  const statusResponses = {
    204: { description: 'Accepted (also for unknown calls and statuses, so the provider does not retry)' },
    ...INPUT_ERRORS,
    403: FORBIDDEN,
    404: NOT_FOUND,
    503: { description: 'The call workflow could not be reached' },
  };

  const routes = [
    route({
      method: 'post',
      path: '/telephony/{provider}/inbound/{agent_name}',
      operationId: 'postInboundCallWebhook',
      tag: TAG,
      public: true,
      summary: 'Voice webhook for incoming calls',
      description: [
        "The number's incoming-call URL in the provider's dashboard: the endpoint's `inbound_webhook_url`.",
        'The number called (`To`) is looked up in the telephony endpoints: an inactive endpoint refuses the call, and the endpoint\'s `inbound_agent_name` answers it (the agent in the URL only when the number has no endpoint or no inbound agent; a mismatch is logged).',
        'Answers the document that connects the call to the media gateway (a bidirectional stream carrying the call id and its stream token) and creates the call (`inbound`, `ringing`). A replayed webhook (same provider call id) gets the same call, never a second one.',
        'Refusals are documents too (some vendors only act on a 200): a reject for an unknown agent, an inactive number or a replay of an ended call; "all our agents are busy" and a hang-up over `<provider>_max_concurrent`.',
        "An agent whose STT, LLM or TTS cannot run on this installation (its `warnings`) is not connected: the caller hears a short apology, and the call is recorded `failed` (`end_reason: error`) with an `error` event naming the provider.",
      ].join(' '),
      params: z.object({ provider: providerParam(), agent_name: z.string().describe('agent answering calls to a number without an endpoint mapping') }),
      responses: { 200: documentResponse(), ...INPUT_ERRORS, 403: FORBIDDEN, 404: NOT_FOUND },
      async handler({ req, res, params }) {
        await inbound(params.provider, params.agent_name, req, res);
      },
    }),
    route({
      method: 'post',
      path: '/telephony/{provider}/answer/{call_id}',
      operationId: 'postAnswerWebhook',
      tag: TAG,
      public: true,
      summary: 'Answer document of an outbound call',
      description: ANSWER_DESCRIPTION,
      params: z.object({ provider: providerParam(), call_id: callIdParam }),
      responses: { 200: documentResponse(), 403: FORBIDDEN, 404: NOT_FOUND },
      async handler({ req, res, params }) {
        await answer(params.provider, params.call_id, req, res);
      },
    }),
    // Older answer URLs a vendor declares (numbers and calls may still point at them).
    ...telephonyDescriptors().flatMap((vendor) =>
      (vendor.legacyAnswerPaths ?? []).map((path) =>
        route({
          method: 'post',
          path,
          operationId: `post${vendor.name.charAt(0).toUpperCase()}${vendor.name.slice(1)}LegacyAnswerWebhook`,
          tag: TAG,
          public: true,
          summary: `${vendor.answerFormat} for an answered outbound ${vendor.label} call (alias of /telephony/${vendor.name}/answer/{call_id})`,
          description: ANSWER_DESCRIPTION,
          params: z.object({ call_id: callIdParam }),
          responses: { 200: documentResponse(), 403: FORBIDDEN, 404: NOT_FOUND },
          async handler({ req, res, params }) {
            await answer(vendor.name, params.call_id, req, res);
          },
        }),
      ),
    ),
    route({
      method: 'post',
      path: '/telephony/{provider}/status/{call_id}',
      operationId: 'postCallStatusWebhook',
      tag: TAG,
      public: true,
      summary: 'Status callback of a call',
      description:
        "The status (and hang-up) callback URL given with outbound calls. The vendor's status word moves the call (ringing → in_progress → completed, or no_answer for busy / no answer / canceled, failed); each callback is recorded as a `call_status` event with the vendor's word. Out-of-order and repeated callbacks never move a call backwards.",
      params: z.object({ provider: providerParam(), call_id: callIdParam }),
      responses: statusResponses,
      async handler({ req, res, params }) {
        await status(params.provider, params.call_id, req, res);
      },
    }),
    route({
      method: 'post',
      path: '/telephony/{provider}/status',
      operationId: 'postNumberStatusWebhook',
      tag: TAG,
      public: true,
      summary: 'Status callback, call found by the provider call id',
      description:
        "For a number's status-callback URL in the provider's dashboard (inbound calls): the call is found by the provider's call id. Same behaviour as /telephony/{provider}/status/{call_id}.",
      params: z.object({ provider: providerParam() }),
      responses: statusResponses,
      async handler({ req, res, params }) {
        await status(params.provider, null, req, res);
      },
    }),
    route({
      method: 'post',
      path: '/telephony/{provider}/machine/{call_id}',
      operationId: 'postMachineDetectionWebhook',
      tag: TAG,
      public: true,
      summary: 'Answering-machine detection result of an outbound call',
      description:
        "Given as the answering-machine detection callback to vendors that have one (their telephony capabilities.machine_detection) when the agent's `voicemail.detect` is on; authenticated like every webhook. The verdict (human, machine, unknown) goes to the call: on a machine the agent stops and hangs up or leaves its message (docs/phone-operations.md#voicemail-on-outbound-calls).",
      params: z.object({ provider: providerParam(), call_id: callIdParam }),
      responses: statusResponses,
      async handler({ req, res, params }) {
        await machine(params.provider, params.call_id, req, res);
      },
    }),
  ];
  // Vendors call with POST (form or JSON) or, if configured so or by design (a URL asked for the
  // stream URL), with GET and the parameters in the query string.
  return routes.flatMap((r) => [
    r,
    { ...r, method: 'get' as const, operationId: r.operationId.replace(/^post/, 'get'), summary: `${r.summary} (GET)` },
  ]);
}

