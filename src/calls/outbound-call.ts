/**
 * Placing one outbound call: the path POST /api/calls/outbound takes, shared with campaigns
 * (activities/campaigns.ts). The call record and its workflow exist before the provider is asked
 * to dial, so every attempt — refused ones included — is visible in the call list with its outcome.
 * Failures are HttpErrors, the answer the API gives; a campaign reads their status (429/503: wait).
 */
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import { plain, type Database } from '../db/database';
import type { SecretBox } from '../security/crypto';
import type { Logger } from '../shared/logger';
import { badRequest, HttpError, unprocessable, callHttpError } from '../api/errors';
import { CallError, startCall } from './call-service';
import { CapacityError, capacityCheck } from './concurrency';
import { allOf, gatewayAdmission, GatewayCapacityError } from './gateway-capacity';
import { retryAfterHeader } from '../shared/retry-after';
import { callUrls, FINAL_CALL_STATUSES, signalTelephonyStatus, streamConnection } from './telephony-calls';
import { providerProblems } from '../providers/agent-readiness';
import { machineDetectionUrl } from '../api/telephony/machine-detection';
import { callCapableProvidersText, telephonyVendor } from '../providers/telephony/registry';
import { TelephonyNotConfigured, TelephonyProviderError, type TelephonyVendor } from '../providers/telephony/types';
import { effectivePublicBaseUrl, loadTelephonySettings } from '../providers/telephony/settings-store';
import { callWorkflowId } from '../../workflows/call-definitions';
import { countProviderError, countRefusedCall } from '../observability/metrics';

// How long a refused call may take to be recorded as failed before the API answers anyway.
const FAILURE_RECORD_WAIT_MS = 5_000;

export interface OutboundDeps {
  config: Config;
  db: Database;
  box: SecretBox;
  temporal: Client;
  log: Logger;
  jwtSecret: string;
}

export interface OutboundRequest {
  phoneNumber: string;
  agentName: string;
  callerId?: string;
  provider?: string;
  customParameters?: Record<string, string | number>;
  /** Merged into the call's metadata (a campaign's ids). */
  metadata?: Record<string, unknown>;
  /** The call's id when the caller chose it (a campaign attempt); default a random one. */
  callId?: string;
}

export interface OutboundResult {
  callId: string;
  providerResponse: { sid: string; status: string };
}

export async function placeOutboundCall(deps: OutboundDeps, req: OutboundRequest): Promise<OutboundResult> {
  const { db, box, config, temporal, log, jwtSecret } = deps;
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

  const settings = await loadTelephonySettings(db, box);
  const provider = req.provider ?? settings.provider;
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
    await Agent.findOne({ where: { name: req.agentName }, attributes: ['id', 'stt_provider', 'stt_mode', 'llm_provider', 'tts_provider', 'voicemail'] }),
  );
  if (!agent) throw new HttpError(404, `Agent ${req.agentName} not found`);
  // Dialling someone for an agent that cannot listen or speak would only ring them into silence.
  const problems = providerProblems(agent, config);
  if (problems.length) throw new HttpError(422, `Agent ${req.agentName} cannot take calls: ${problems.join('; ')}`);
  const from = await fromNumber(provider, req.agentName, req.callerId, (settings.vendors[provider]?.phone_number as string | null | undefined) ?? null);
  const baseUrl = effectivePublicBaseUrl(settings, config);

  let callId: string;
  try {
    ({ callId } = await startCall(deps, {
      callId: req.callId,
      agentName: req.agentName,
      phoneNumber: req.phoneNumber,
      direction: 'outbound',
      channel: 'voice',
      customParameters: req.customParameters,
      metadata: { ...req.metadata, from_number: from },
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
      to: req.phoneNumber,
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
  return { callId, providerResponse: dialed.response };
}
