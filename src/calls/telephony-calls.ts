/**
 * What the API and the worker need to run phone calls through any vendor, beyond starting the
 * workflow: the URLs handed to the provider, the stream connection of a call, status signals to
 * the workflow, and hanging a provider's call up. Vendor-specific work goes through the registry.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Database } from '../db/database';
import { plain } from '../db/database';
import type { CallRow } from '../db/models';
import { signalWithStartExisting } from '../temporal/signal-with-start';
import type { SecretBox } from '../security/crypto';
import { streamToken } from '../gateway/stream/stream-token';
import { telephonyVendor } from '../providers/telephony/registry';
import { loadTelephonySettings } from '../providers/telephony/settings-store';
import type { StreamConnection } from '../providers/telephony/types';
import type { Logger } from '../shared/logger';
import { callWorkflowId, telephonyStatusSignal, type TelephonyStatusSignal } from '../../workflows/call-definitions';
import { countProviderError } from '../observability/metrics';

/** Call statuses after which nothing more happens on the phone line. */
export const FINAL_CALL_STATUSES = new Set(['completed', 'failed', 'no_answer']);

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Path of a vendor's media stream endpoint on the media gateway. */
export const mediaPath = (provider: string) => `/media/${provider}`;

/** The URLs a provider is given for one outbound call. */
export function callUrls(publicBaseUrl: string, provider: string, callId: string) {
  return {
    answerUrl: `${publicBaseUrl}/telephony/${provider}/answer/${callId}`,
    statusUrl: `${publicBaseUrl}/telephony/${provider}/status/${callId}`,
  };
}

/**
 * The WebSocket URL a provider streams a call's audio to. GATEWAY_PUBLIC_URL when set; otherwise
 * the public base URL with https→wss (a reverse proxy routes /media to the gateway), and for a
 * loopback http base — a local setup — the gateway port on 127.0.0.1 directly.
 */
export function gatewayStreamUrl(config: Pick<Config, 'GATEWAY_PUBLIC_URL' | 'GATEWAY_PORT'>, publicBaseUrl: string, provider: string): string {
  const path = mediaPath(provider);
  if (config.GATEWAY_PUBLIC_URL) return `${config.GATEWAY_PUBLIC_URL.replace(/\/+$/, '')}${path}`;
  const base = new URL(publicBaseUrl);
  if (base.protocol === 'http:' && LOOPBACK_HOSTS.has(base.hostname)) return `ws://127.0.0.1:${config.GATEWAY_PORT}${path}`;
  const scheme = base.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${base.host}${base.pathname.replace(/\/+$/, '')}${path}`;
}

/** Where and how a call's stream connects: the gateway URL, the call id and its stream token. */
export function streamConnection(
  config: Pick<Config, 'GATEWAY_PUBLIC_URL' | 'GATEWAY_PORT'>,
  publicBaseUrl: string,
  provider: string,
  streamSecret: string,
  callId: string,
): StreamConnection {
  return { streamUrl: gatewayStreamUrl(config, publicBaseUrl, provider), callId, token: streamToken(streamSecret, callId) };
}

/**
 * Signals a call's workflow with a provider status. A workflow that has already finished is not
 * an error: late and repeated callbacks are normal. Returns whether the signal was delivered.
 *
 * A call that ended (`taskQueue` given) is signalled with start: an incoming call's workflow still
 * waiting for its stream (call-service.ts, INBOUND_STREAM_WAIT) runs at once to record the end,
 * instead of after the wait. It never starts a workflow: the one found running or none (refused).
 */
export async function signalTelephonyStatus(temporal: Client, callId: string, signal: TelephonyStatusSignal, taskQueue?: string): Promise<boolean> {
  const workflowId = callWorkflowId(callId);
  const ended = signal.status !== 'ringing' && signal.status !== 'answered';
  try {
    if (ended && taskQueue) {
      await signalWithStartExisting(temporal, { workflowType: 'callWorkflow', workflowId, taskQueue }, telephonyStatusSignal, signal);
    } else {
      await temporal.workflow.getHandle(workflowId).signal(telephonyStatusSignal, signal);
    }
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

export type HangupOutcome = 'hung_up' | 'no_provider_call' | 'failed';

/**
 * Ends the provider's side of a call: hangs up an answered call, cancels a ringing one, and is a
 * no-op for a call the provider already ended. Used whenever a call ends on the platform's side
 * (the workflow's finish path), so nobody is left on a dead line. Throws only
 * TelephonyProviderError of kind `unavailable` (worth retrying); other failures are logged.
 */
export async function hangupProviderCall(
  deps: { db: Database; box: SecretBox; config: Config; log: Logger },
  callId: string,
): Promise<HangupOutcome> {
  const call = plain(await deps.db.models.Call.findByPk(callId, { attributes: ['id', 'provider', 'provider_call_sid'] })) as Pick<
    CallRow,
    'id' | 'provider' | 'provider_call_sid'
  > | null;
  const vendor = call?.provider ? await telephonyVendor(call.provider) : undefined;
  if (!call || !vendor || !call.provider_call_sid) return 'no_provider_call';
  const settings = await loadTelephonySettings(deps.db, deps.box);
  let creds: unknown;
  try {
    creds = vendor.credentials(settings.vendors[vendor.name] ?? {}, deps.config);
  } catch (err) {
    deps.log.warn('cannot hang up the provider call: credentials missing', { call_id: callId, provider: vendor.name, error: (err as Error).message });
    return 'failed';
  }
  try {
    await vendor.hangup(creds, call.provider_call_sid);
    return 'hung_up';
  } catch (err) {
    countProviderError('telephony', vendor.name);
    if ((err as { kind?: string }).kind === 'unavailable') throw err;
    deps.log.warn('the provider refused to hang up the call', { call_id: callId, provider: vendor.name, error: (err as Error).message });
    return 'failed';
  }
}
