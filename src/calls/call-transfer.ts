/**
 * Starts a cold transfer of a live phone call (docs/phone-operations.md#transfer-to-a-human): the vendor is
 * asked to dial the destination on the call, with our dial callback URLs. Run by the worker's
 * transferProviderCall activity; the vendor's dial callbacks come to the API's transfer routes.
 */
import type { Config } from '../config';
import type { Database } from '../db/database';
import { plain } from '../db/database';
import type { CallRow } from '../db/models';
import type { SecretBox } from '../security/crypto';
import { countProviderError } from '../observability/metrics';
import { telephonyVendor } from '../providers/telephony/registry';
import { effectivePublicBaseUrl, loadTelephonySettings } from '../providers/telephony/settings-store';
import { TelephonyProviderError, type TransferDialRequest } from '../providers/telephony/types';
import type { TransferTarget } from '../shared/transfer';

export type TransferStart = { ok: true } | { ok: false; error: string };

/** The URLs of one call's transfer (the dial URL carries the target: vendors that fetch it sign it). */
export function transferUrls(publicBaseUrl: string, provider: string, callId: string, target: TransferTarget) {
  const base = `${publicBaseUrl}/telephony/${provider}/transfer/${callId}`;
  const query = new URLSearchParams(target.phoneNumber ? { to: target.phoneNumber } : { sip: target.sipUri ?? '' });
  return { actionUrl: base, eventsUrl: `${base}/events`, dialUrl: `${base}/dial?${query}` };
}

/**
 * Asks the call's vendor to dial `target` on the live call. A refusal (no provider call, a vendor
 * without transfer, credentials missing, the vendor said no) is a result; only an unreachable
 * vendor is thrown, for the activity's retries.
 */
export async function startTransfer(
  deps: { db: Database; box: SecretBox; config: Config },
  input: { callId: string; target: TransferTarget; ringTimeoutSecs: number },
): Promise<TransferStart> {
  const call = plain(await deps.db.models.Call.findByPk(input.callId, { attributes: ['id', 'provider', 'provider_call_sid'] })) as Pick<
    CallRow,
    'id' | 'provider' | 'provider_call_sid'
  > | null;
  const vendor = call?.provider ? await telephonyVendor(call.provider) : undefined;
  if (!call || !vendor || !call.provider_call_sid) return { ok: false, error: 'the call has no telephony provider call to transfer' };
  if (!vendor.transfer) return { ok: false, error: `${vendor.label} calls cannot be transferred` };
  const settings = await loadTelephonySettings(deps.db, deps.box);
  let creds: unknown;
  try {
    creds = vendor.credentials(settings.vendors[vendor.name] ?? {}, deps.config);
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
  const request: TransferDialRequest = {
    target: input.target,
    ringTimeoutSecs: input.ringTimeoutSecs,
    ...transferUrls(effectivePublicBaseUrl(settings, deps.config), vendor.name, call.id, input.target),
  };
  try {
    await vendor.transfer.start(creds, call.provider_call_sid, request);
    return { ok: true };
  } catch (err) {
    countProviderError('telephony', vendor.name);
    if (err instanceof TelephonyProviderError && err.kind !== 'unavailable') return { ok: false, error: `${vendor.label}: ${err.message}` };
    throw err;
  }
}
