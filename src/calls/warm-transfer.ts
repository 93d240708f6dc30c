/**
 * The vendor side of a warm transfer (docs/phone-operations.md#warm-transfer), run by the worker's
 * activities: the caller put on hold in a conference and the human dialled as a call of its own
 * (start), the human moved into the caller's conference (join), or the caller brought back to a
 * stream of the agent and the human's leg hung up (give back). A refusal is a result; only an
 * unreachable vendor is thrown, for the activities' retries.
 */
import type { Config } from '../config';
import type { Database } from '../db/database';
import { plain } from '../db/database';
import type { CallRow } from '../db/models';
import type { SecretBox } from '../security/crypto';
import { countProviderError } from '../observability/metrics';
import { telephonyVendor } from '../providers/telephony/registry';
import { effectivePublicBaseUrl, loadTelephonySettings } from '../providers/telephony/settings-store';
import { TelephonyProviderError, type TelephonyVendor, type WarmTransferRequest, type WarmTransferSupport } from '../providers/telephony/types';
import { HOLD_TONE, type TransferTarget } from '../shared/transfer';

type Deps = { db: Database; box: SecretBox; config: Config };
export type WarmStart = { ok: true; humanCallId: string } | { ok: false; error: string; held: boolean };
export type WarmStep = { ok: true } | { ok: false; error: string };

/** The built-in hold audio, served by the API for each vendor with warm transfer (src/api/routes/telephony-warm.ts). */
export function holdTonePath(provider: string): string {
  return `/telephony/${provider}/hold-tone.wav`;
}

export function conferenceName(callId: string): string {
  return `warm-${callId}`;
}

/** The URLs of one call's warm transfer. */
export function warmUrls(publicBaseUrl: string, provider: string, callId: string, holdAudio: string) {
  const base = `${publicBaseUrl}/telephony/${provider}/warm/${callId}`;
  const audio = holdAudio === HOLD_TONE ? `${publicBaseUrl}${holdTonePath(provider)}` : holdAudio;
  return {
    holdUrl: `${base}/hold?${new URLSearchParams({ audio })}`,
    answerUrl: `${base}/answer`,
    eventsUrl: `${base}/events`,
    returnUrl: `${base}/return`,
    joinUrl: `${base}/join`,
  };
}

interface Resolved {
  call: Pick<CallRow, 'id' | 'provider' | 'provider_call_sid'>;
  vendor: TelephonyVendor;
  warm: WarmTransferSupport;
  creds: unknown;
  publicBaseUrl: string;
  ourNumber: string | null;
}

/** The call, its vendor with warm transfer and the credentials; a string says why not. */
async function resolve(deps: Deps, callId: string): Promise<Resolved | string> {
  const call = plain(await deps.db.models.Call.findByPk(callId, { attributes: ['id', 'provider', 'provider_call_sid'] })) as Resolved['call'] | null;
  const vendor = call?.provider ? await telephonyVendor(call.provider) : undefined;
  if (!call || !vendor || !call.provider_call_sid) return 'the call has no telephony provider call to transfer';
  const warm = vendor.transfer?.warm;
  if (!warm) return `${vendor.label} calls cannot be transferred warm`;
  const settings = await loadTelephonySettings(deps.db, deps.box);
  const own = settings.vendors[vendor.name] ?? {};
  try {
    const creds = vendor.credentials(own, deps.config);
    const ourNumber = typeof own.phone_number === 'string' ? own.phone_number : null;
    return { call, vendor, warm, creds, publicBaseUrl: effectivePublicBaseUrl(settings, deps.config), ourNumber };
  } catch (err) {
    return (err as Error).message;
  }
}

/** A vendor refusal as text; an unreachable vendor thrown (retried). */
function refusal(vendor: TelephonyVendor, err: unknown): string {
  countProviderError('telephony', vendor.name);
  if (err instanceof TelephonyProviderError && err.kind !== 'unavailable') return `${vendor.label}: ${err.message}`;
  throw err;
}

/** Puts the caller on hold in the call's conference and dials the human. */
export async function startWarmTransfer(deps: Deps, input: { callId: string; target: TransferTarget; holdAudio: string; maxWaitSecs: number }): Promise<WarmStart> {
  const r = await resolve(deps, input.callId);
  if (typeof r === 'string') return { ok: false, error: r, held: false };
  if (!r.ourNumber) return { ok: false, error: `no ${r.vendor.name}_phone_number to call the destination from`, held: false };
  const req: WarmTransferRequest = {
    target: input.target,
    from: r.ourNumber,
    conferenceName: conferenceName(r.call.id),
    maxWaitSecs: input.maxWaitSecs,
    ...warmUrls(r.publicBaseUrl, r.vendor.name, r.call.id, input.holdAudio),
  };
  try {
    await r.warm.hold(r.creds, r.call.provider_call_sid!, req);
  } catch (err) {
    return { ok: false, error: refusal(r.vendor, err), held: false };
  }
  try {
    return { ok: true, humanCallId: await r.warm.dialHuman(r.creds, req) };
  } catch (err) {
    return { ok: false, error: refusal(r.vendor, err), held: true };
  }
}

/** The hand-over: the human leaves the briefing for the caller's conference. */
export async function joinWarmTransfer(deps: Deps, input: { callId: string; humanCallId: string }): Promise<WarmStep> {
  const r = await resolve(deps, input.callId);
  if (typeof r === 'string') return { ok: false, error: r };
  try {
    await r.warm.join(r.creds, input.humanCallId, conferenceName(r.call.id), warmUrls(r.publicBaseUrl, r.vendor.name, r.call.id, HOLD_TONE).joinUrl);
    return { ok: true };
  } catch (err) {
    return { ok: false, error: refusal(r.vendor, err) };
  }
}

/** The transfer did not happen: the human's leg hung up (if any), the caller back to the agent. */
export async function giveBackWarmTransfer(deps: Deps, input: { callId: string; humanCallId: string | null }): Promise<WarmStep> {
  const r = await resolve(deps, input.callId);
  if (typeof r === 'string') return { ok: false, error: r };
  try {
    if (input.humanCallId) await r.vendor.hangup(r.creds, input.humanCallId);
    await r.warm.giveBack(r.creds, r.call.provider_call_sid!, warmUrls(r.publicBaseUrl, r.vendor.name, r.call.id, HOLD_TONE).returnUrl);
    return { ok: true };
  } catch (err) {
    return { ok: false, error: refusal(r.vendor, err) };
  }
}
