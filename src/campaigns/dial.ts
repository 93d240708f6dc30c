/**
 * Dialling one decided attempt through the outbound path every call takes
 * (src/calls/outbound-call.ts), with the attempt's id as the call's id. The call record is the
 * ledger: an attempt whose call exists is never dialled again, whatever died in between.
 * Our own admission saying "not now" (429, 503 with no call written) is a wait, not an attempt;
 * a misconfigured agent or provider stops the campaign with the reason.
 */
import { Op, UniqueConstraintError } from 'sequelize';
import { HttpError } from '../api/errors';
import { plain } from '../db/database';
import { placeOutboundCall, type OutboundDeps } from '../calls/outbound-call';
import { FINAL_CALL_STATUSES, signalTelephonyStatus } from '../calls/telephony-calls';

export type DialResult =
  | { kind: 'dialled'; callId: string }
  /** Its call existed already: dialled before (by this attempt, in a process that died). */
  | { kind: 'already'; callId: string }
  /** Not dialled now: the campaign is not running, or the number is on the do-not-call list. */
  | { kind: 'held' | 'skipped_dnc' }
  | { kind: 'wait'; retryAfterSecs: number; detail: string }
  | { kind: 'stopped'; detail: string };

const MISCONFIGURED = new Set([400, 404, 422]);

export async function dialAttempt(deps: OutboundDeps, id: string): Promise<DialResult> {
  const { CampaignAttempt, CampaignContact, Campaign, Call, DoNotCall } = deps.db.models;
  const markDialled = () => CampaignAttempt.update({ state: 'dialled', dialled_at: new Date() }, { where: { id, state: 'decided' } });
  const attempt = plain(await CampaignAttempt.findByPk(id));
  if (!attempt) return { kind: 'held' };
  const existing = plain(await Call.findByPk(id, { attributes: ['status', 'provider_call_sid'] }));
  if (attempt.state !== 'decided' || existing) {
    if (existing && !existing.provider_call_sid && !FINAL_CALL_STATUSES.has(existing.status)) await endUnconfirmed(deps, id);
    await markDialled();
    return { kind: 'already', callId: id };
  }
  const [campaignRow, contactRow] = await Promise.all([Campaign.findByPk(attempt.campaign_id), CampaignContact.findByPk(attempt.contact_id)]);
  const campaign = plain(campaignRow);
  const contact = plain(contactRow);
  if (!campaign || !contact || campaign.status !== 'running') return { kind: 'held' };
  // Added to the list after the upload: still never dialled.
  if (await DoNotCall.count({ where: { phone_number: contact.phone_number, [Op.or]: [{ owner_id: null }, ...(campaign.owner_id ? [{ owner_id: campaign.owner_id }] : [])] } })) {
    await deps.db.sequelize.transaction(async (transaction) => {
      await CampaignAttempt.destroy({ where: { id }, transaction });
      await CampaignContact.update({ state: 'skipped_dnc', attempts: attempt.attempt - 1 }, { where: { id: contact.id }, transaction });
    });
    return { kind: 'skipped_dnc' };
  }
  try {
    await placeOutboundCall(deps, {
      callId: id,
      phoneNumber: contact.phone_number,
      agentName: campaign.agent_name,
      provider: campaign.provider ?? undefined,
      callerId: campaign.from_number ?? undefined,
      customParameters: contact.custom_parameters,
      metadata: { campaign_id: campaign.id, contact_id: contact.id, attempt: attempt.attempt },
    });
  } catch (err) {
    // Whatever went wrong after the record was written, the record stands for the attempt.
    if (err instanceof UniqueConstraintError || (await Call.count({ where: { id } }))) {
      await markDialled();
      return { kind: 'already', callId: id };
    }
    if (!(err instanceof HttpError)) throw err;
    if (err.status === 429 || err.status === 503) {
      return { kind: 'wait', retryAfterSecs: Number(err.headers['Retry-After'] ?? 5) || 5, detail: err.detail };
    }
    if (MISCONFIGURED.has(err.status)) {
      const detail = `cannot place calls: ${err.detail}`;
      await Campaign.update({ status: 'stopped', status_reason: detail }, { where: { id: campaign.id, status: 'running' } });
      return { kind: 'stopped', detail };
    }
    throw err;
  }
  await markDialled();
  return { kind: 'dialled', callId: id };
}

/**
 * An earlier run of this dial wrote the call record and died before the provider answered the
 * request (no provider call id). Whether the request left is unknown, so it is never sent again
 * (a person is not called twice); the call ends `failed` at once, with why, rather than waiting
 * out the ring timeout, and the attempt's outcome is `failed` (retried only when retry_on says so).
 */
async function endUnconfirmed(deps: OutboundDeps, callId: string): Promise<void> {
  const detail = { source: 'create_call', error: 'the dialler stopped before the provider confirmed the call; not sent again, so as never to call twice' };
  const signalled = await signalTelephonyStatus(deps.temporal, callId, { status: 'failed', detail });
  if (!signalled) {
    await deps.db.models.Call.update({ status: 'failed', end_reason: 'error', end_time: new Date() }, { where: { id: callId, provider_call_sid: null } });
  }
}
