/**
 * What the API needs to run phone calls through a provider, beyond starting the workflow: the
 * provider credentials from the stored settings, the URLs handed to the provider, the TwiML that
 * connects a call's audio to the media gateway, and mapping provider callbacks to workflow signals.
 * Twilio is the one provider implemented; the functions are named for it where they are specific.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Database } from '../db/database';
import type { CallRow } from '../db/models';
import { loadTelephonySettings, type TelephonySettings } from '../api/telephony/settings-store';
import type { SecretBox } from '../security/crypto';
import { streamToken } from '../gateway/stream-token';
import { hangupTwilioCall, type TwilioCredentials } from '../providers/telephony/twilio/client';
import { TWILIO_CALL_STATUSES, type TwilioCallStatus } from '../providers/telephony/twilio/status';
import { connectStreamTwiml } from '../providers/telephony/twilio/twiml';
import type { Logger } from '../shared/logger';
import { callWorkflowId, telephonyStatusSignal, type TelephonyStatusSignal } from '../../workflows/call-definitions';

/** Call statuses after which nothing more happens on the phone line. */
export const FINAL_CALL_STATUSES = new Set(['completed', 'failed', 'no_answer']);

/** Path of the Twilio Media Streams endpoint on the media gateway. */
export const TWILIO_MEDIA_PATH = '/media/twilio';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Thrown when the stored settings lack what a provider call needs; `missing` names the fields. */
export class TelephonyNotConfigured extends Error {
  constructor(readonly missing: string[]) {
    super(`Twilio is not configured: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set (PUT /api/settings/telephony)`);
  }
}

/** Twilio REST credentials from the stored settings; throws TelephonyNotConfigured. */
export function twilioCredentials(settings: TelephonySettings, config: Pick<Config, 'TWILIO_API_BASE_URL'>): TwilioCredentials {
  const { account_sid: accountSid, auth_token: authToken } = settings.twilio;
  const missing = [...(accountSid ? [] : ['twilio_account_sid']), ...(authToken ? [] : ['twilio_auth_token'])];
  if (missing.length) throw new TelephonyNotConfigured(missing);
  return { accountSid: accountSid!, authToken: authToken!, apiBaseUrl: config.TWILIO_API_BASE_URL };
}

/** The URLs Twilio is given for one outbound call. */
export function twilioCallUrls(publicBaseUrl: string, callId: string) {
  return {
    twimlUrl: `${publicBaseUrl}/telephony/twilio/twiml/${callId}`,
    statusCallbackUrl: `${publicBaseUrl}/telephony/twilio/status/${callId}`,
  };
}

/**
 * The WebSocket URL Twilio streams a call's audio to. GATEWAY_PUBLIC_URL when set; otherwise the
 * public base URL with https→wss (a reverse proxy routes /media to the gateway), and for a
 * loopback http base — a local setup — the gateway port on 127.0.0.1 directly.
 */
export function twilioStreamUrl(config: Pick<Config, 'GATEWAY_PUBLIC_URL' | 'GATEWAY_PORT'>, publicBaseUrl: string): string {
  if (config.GATEWAY_PUBLIC_URL) return `${config.GATEWAY_PUBLIC_URL.replace(/\/+$/, '')}${TWILIO_MEDIA_PATH}`;
  const base = new URL(publicBaseUrl);
  if (base.protocol === 'http:' && LOOPBACK_HOSTS.has(base.hostname)) return `ws://127.0.0.1:${config.GATEWAY_PORT}${TWILIO_MEDIA_PATH}`;
  const scheme = base.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${base.host}${base.pathname.replace(/\/+$/, '')}${TWILIO_MEDIA_PATH}`;
}

/**
 * `<Connect><Stream>` for one call. The gateway authenticates the stream by the `call_id` and
 * `token` parameters (they arrive in the stream's `start` message; a URL query string would make
 * Twilio fail the handshake).
 */
export function callStreamTwiml(streamUrl: string, streamSecret: string, callId: string): string {
  return connectStreamTwiml({ streamUrl, parameters: { call_id: callId, token: streamToken(streamSecret, callId) } });
}

const SIGNAL_STATUS: Record<TwilioCallStatus, TelephonyStatusSignal['status']> = {
  queued: 'ringing',
  initiated: 'ringing',
  ringing: 'ringing',
  'in-progress': 'answered',
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'no_answer',
  canceled: 'canceled',
  failed: 'failed',
};

/** The workflow signal status for a Twilio CallStatus; null for a status Twilio does not define. */
export function twilioSignalStatus(callStatus: string): TelephonyStatusSignal['status'] | null {
  return (TWILIO_CALL_STATUSES as readonly string[]).includes(callStatus) ? SIGNAL_STATUS[callStatus as TwilioCallStatus] : null;
}

/**
 * Signals a call's workflow with a provider status. A workflow that has already finished is not
 * an error: late and repeated callbacks are normal. Returns whether the signal was delivered.
 */
export async function signalTelephonyStatus(temporal: Client, callId: string, signal: TelephonyStatusSignal): Promise<boolean> {
  try {
    await temporal.workflow.getHandle(callWorkflowId(callId)).signal(telephonyStatusSignal, signal);
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/**
 * Ends the provider's side of a live phone call (POST /api/calls/end): hangs up an answered call,
 * cancels a ringing one. Best effort: a failure is logged and the call is still ended on our side.
 */
export async function hangupProviderCall(
  deps: { db: Database; box: SecretBox; config: Config; log: Logger },
  call: Pick<CallRow, 'id' | 'provider' | 'provider_call_sid' | 'status'>,
): Promise<void> {
  if (call.provider !== 'twilio' || !call.provider_call_sid || FINAL_CALL_STATUSES.has(call.status)) return;
  try {
    const settings = await loadTelephonySettings(deps.db, deps.box);
    await hangupTwilioCall(twilioCredentials(settings, deps.config), call.provider_call_sid);
  } catch (err) {
    deps.log.warn('could not hang up the provider call', { call_id: call.id, provider: call.provider, error: err });
  }
}
