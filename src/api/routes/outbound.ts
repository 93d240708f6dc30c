/**
 * POST /api/calls/outbound: dial a number with an agent. The call record and its workflow exist
 * before the provider is asked to dial, so every attempt — refused ones included — is visible in
 * the call list with its outcome.
 */
import { z } from 'zod';
import { CustomParameters } from '../schemas/call-input';
import type { ApiContext } from '../context';
import { badRequest, HttpError, unprocessable, callHttpError } from '../errors';
import { route } from '../route';
import { plain } from '../../db/database';
import { CallError, startCall, type CallDeps } from '../../calls/call-service';
import { CapacityError, capacityCheck } from '../../calls/concurrency';
import { allOf, gatewayAdmission, GatewayCapacityError } from '../../calls/gateway-capacity';
import { RETRY_AFTER_SECS, retryAfterHeader } from '../../shared/retry-after';
import { callUrls, FINAL_CALL_STATUSES, signalTelephonyStatus, streamConnection } from '../../calls/telephony-calls';
import { providerProblems } from '../../providers/agent-readiness';
import { machineDetectionUrl } from '../telephony/machine-detection';
import { callCapableProvidersText, telephonyVendor } from '../../providers/telephony/registry';
import { TelephonyNotConfigured, TelephonyProviderError, type TelephonyVendor } from '../../providers/telephony/types';
import { effectivePublicBaseUrl, loadTelephonySettings } from '../../providers/telephony/settings-store';
import { callWorkflowId } from '../../../workflows/call-definitions';
import { PhoneNumberSchema, providerSchema } from '../schemas/settings';
import { countProviderError, countRefusedCall } from '../../observability/metrics';

// How long a refused call may take to be recorded as failed before the API answers anyway.
const FAILURE_RECORD_WAIT_MS = 5_000;


const outboundBody = () => z.strictObject({
  phone_number: PhoneNumberSchema.describe('destination, E.164 with country code'),
  agent_name: z.string().trim().min(1).max(200).describe('the agent that handles the call'),
  caller_id: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .optional()
    .describe(
      'number shown to the callee (E.164; must be a number of the account or a verified caller ID). Default: the active endpoint whose outbound_agent_name is this agent, else the provider phone_number setting',
    ),
  provider: providerSchema().optional().describe(`overrides the stored provider; supported for calls: ${callCapableProvidersText()}`),
  custom_parameters: CustomParameters.describe('string or number values; substituted into prompts and merged into tool arguments'),
});

const OutboundResponse = z.object({
  status: z.literal('initiated'),
  call_id: z.uuid(),
  provider_response: z.object({ sid: z.string(), status: z.string() }).describe("the provider's own reply (its call or request id and status word, e.g. `queued`)"),
});

export function outboundRoutes(ctx: ApiContext) {
  const { db, box, config, temporal, log, jwtSecret } = ctx;
  const deps: CallDeps = { config, db, temporal };
  const { Agent, Call, TelephonyEndpoint } = db.models;

  /** The number the call comes from: caller_id, else the agent's endpoint, else the default. */
  async function fromNumber(provider: string, agentName: string, callerId: string | undefined, fallback: string | null) {
    if (callerId) return callerId;
    const endpoint = plain(
      await TelephonyEndpoint.findOne({
        where: { provider, outbound_agent_name: agentName, is_active: true },
        order: [['created_at', 'ASC'], ['id', 'ASC']],
      }),
    );
    const number = endpoint?.phone_number ?? fallback;
    if (!number) {
      throw unprocessable(
        'caller_id',
        `no number to call from: pass caller_id, map a number to agent ${agentName} (outbound_agent_name) with POST /api/settings/endpoints, or set ${provider}_phone_number`,
      );
    }
    return number;
  }

  /**
   * The provider refused the call: tell the workflow, so the record and its events show the
   * provider's words, and wait briefly for it to record `failed`; should the worker be
   * unavailable, mark the row directly so the attempt does not hold a concurrency slot.
   */
  async function recordRefusal(callId: string, err: TelephonyProviderError) {
    const detail = { provider: err.provider, source: 'create_call', error: err.message, code: err.code, kind: err.kind };
    try {
      await signalTelephonyStatus(temporal, callId, { status: 'failed', detail });
      const result = temporal.workflow.getHandle(callWorkflowId(callId)).result();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([result.catch(() => undefined), new Promise((r) => (timer = setTimeout(r, FAILURE_RECORD_WAIT_MS)))]);
      clearTimeout(timer);
    } catch (signalErr) {
      log.warn('could not signal the refused call', { call_id: callId, error: signalErr });
    }
    const row = plain(await Call.findByPk(callId, { attributes: ['status'] }));
    if (row && !FINAL_CALL_STATUSES.has(row.status)) {
      await Call.update({ status: 'failed', end_reason: 'error', end_time: new Date() }, { where: { id: callId } });
    }
  }

  function providerHttpError(vendor: TelephonyVendor, err: TelephonyProviderError): HttpError {
    const code = err.code !== null ? ` (${err.provider} error ${err.code})` : '';
    switch (err.kind) {
      case 'auth':
        return new HttpError(502, `${err.message}${code}. Check ${vendor.credentialFields.join(' and ')} in PUT /api/settings/telephony`);
      case 'unavailable':
        return new HttpError(503, `${err.message}${code}`);
      default:
        return new HttpError(502, `${vendor.label} refused the call: ${err.message}${code}`);
    }
  }

  return [
    route({
      method: 'post',
      path: '/api/calls/outbound',
      operationId: 'createOutboundCall',
      tag: 'Calls',
      summary: 'Place an outbound phone call',
      description: [
        'Creates the call (status `ringing`, direction `outbound`) and its workflow, then asks the provider to dial.',
        `The provider is \`provider\` or the stored telephony provider; supported for calls: ${callCapableProvidersText()}.`,
        'Caller ID: `caller_id`, else the oldest active endpoint of the provider whose `outbound_agent_name` is the agent, else `<provider>_phone_number`.',
        'Status callbacks then move the call through `ringing` → `in_progress` → `completed` (or `no_answer` for busy / no answer / canceled, `failed` when the provider cannot connect).',
        `At most \`<provider>_max_concurrent\` calls of the provider (inbound and outbound, status ringing or in_progress) run at once across all API instances; over the cap the answer is 429 with \`Retry-After: ${RETRY_AFTER_SECS.providerCapFull}\`.`,
        "When the provider refuses the call, the call is recorded as `failed` (its `call_status` event holds the provider's message) and the answer is 502 with that message.",
        `When no media gateway has room for another call (each publishes its load; see docs/call-lifecycle.md), nothing is dialled and the answer is 503 with \`Retry-After: ${RETRY_AFTER_SECS.gatewayFull}\`.`,
      ].join(' '),
      body: outboundBody(),
      responses: {
        201: { description: 'The provider accepted the call; it is ringing', schema: OutboundResponse },
        400: { description: 'No telephony provider configured, or its credentials are missing (the detail names the settings to set)' },
        404: { description: 'Unknown agent' },
        422: {
          description:
            "Invalid field, a provider not supported for calls yet, no number to call from (`caller_id`), or the agent's STT, LLM or TTS cannot run here (the detail is its `warnings`); nothing is dialled",
        },
        429: { description: `All max_concurrent slots of the provider are in use; retry after Retry-After (${RETRY_AFTER_SECS.providerCapFull} s)` },
        502: { description: "The provider refused the call (its message and error code), or rejected the stored credentials" },
        503: {
          description: `The provider or Temporal cannot be reached, or no media gateway has room for the call (every live gateway is at capacity or draining, or none runs): retry after Retry-After (${RETRY_AFTER_SECS.gatewayFull} s)`,
        },
      },
      async handler({ body }) {
        const settings = await loadTelephonySettings(db, box);
        const provider = body.provider ?? settings.provider;
        if (!provider) throw badRequest('No telephony provider is configured: set one with PUT /api/settings/telephony, or pass provider');
        const vendor = await telephonyVendor(provider);
        if (!vendor) {
          throw unprocessable('provider', `${provider} is not supported yet for calls; supported: ${callCapableProvidersText()}`);
        }
        let creds: unknown;
        try {
          creds = vendor.credentials(settings.vendors[provider] ?? {}, config);
        } catch (err) {
          if (err instanceof TelephonyNotConfigured) throw badRequest(err.message);
          throw err;
        }
        const agent = plain(
          await Agent.findOne({ where: { name: body.agent_name }, attributes: ['id', 'stt_provider', 'stt_mode', 'llm_provider', 'tts_provider', 'voicemail'] }),
        );
        if (!agent) throw new HttpError(404, `Agent ${body.agent_name} not found`);
        // Dialling someone for an agent that cannot listen or speak would only ring them into silence.
        const problems = providerProblems(agent, config);
        if (problems.length) throw new HttpError(422, `Agent ${body.agent_name} cannot take calls: ${problems.join('; ')}`);
        const from = await fromNumber(provider, body.agent_name, body.caller_id, (settings.vendors[provider]?.phone_number as string | null | undefined) ?? null);
        const baseUrl = effectivePublicBaseUrl(settings, config);

        let callId: string;
        try {
          ({ callId } = await startCall(deps, {
            agentName: body.agent_name,
            phoneNumber: body.phone_number,
            direction: 'outbound',
            channel: 'voice',
            customParameters: body.custom_parameters,
            metadata: { from_number: from },
            initialStatus: 'ringing',
            provider,
            admit: allOf(capacityCheck(db, provider, Number(settings.vendors[provider]?.max_concurrent)), gatewayAdmission(db, config)),
          }));
        } catch (err) {
          if (err instanceof GatewayCapacityError) {
            countRefusedCall(err.reason, 'outbound');
            throw new HttpError(503, err.message, retryAfterHeader('gatewayFull'));
          }
          if (err instanceof CapacityError) throw new HttpError(429, err.message, retryAfterHeader('providerCapFull'));
          if (err instanceof CallError) throw callHttpError(err);
          throw err;
        }

        let dialed;
        try {
          dialed = await vendor.dial(creds, {
            callId,
            to: body.phone_number,
            from,
            ...callUrls(baseUrl, provider, callId),
            stream: streamConnection(config, baseUrl, provider, jwtSecret, callId),
            ringTimeoutSecs: config.RING_TIMEOUT_SECS,
            ...(agent.voicemail?.detect ? { machineDetection: { action: agent.voicemail.action, url: machineDetectionUrl(baseUrl, provider, callId) } } : {}),
          });
        } catch (err) {
          if (!(err instanceof TelephonyProviderError)) throw err;
          countProviderError('telephony', provider);
          log.warn('provider refused an outbound call', { call_id: callId, provider, kind: err.kind, code: err.code, message: err.message });
          await recordRefusal(callId, err);
          throw providerHttpError(vendor, err);
        }
        // Callbacks may already have arrived (routed by call id) and stored the provider's id.
        await Call.update({ provider_call_sid: dialed.providerCallId }, { where: { id: callId, provider_call_sid: null } });
        const { sid, status } = dialed.response;
        return { status: 201, body: { status: 'initiated', call_id: callId, provider_response: { sid, status } } };
      },
    }),
  ];
}
