/**
 * Ended calls of a campaign's attempts → the attempt's outcome and the contact's next state
 * (done, retry_wait after the minimum interval, or failed once the attempts or the rules run out).
 */
import { QueryTypes } from 'sequelize';
import type { Database } from '../db/database';
import type { AttemptOutcome, CampaignRetry, ContactState } from '../db/models/campaigns';

interface EndedAttempt {
  id: string;
  contact_id: string;
  attempt: number;
  status: string;
  end_reason: string | null;
  answered_by: string | null;
  end_time: Date | null;
  busy: boolean;
}

export function outcomeOf(call: Pick<EndedAttempt, 'status' | 'end_reason' | 'answered_by' | 'busy'>): AttemptOutcome {
  if (call.status === 'failed') return 'failed';
  if (call.status === 'no_answer') return call.busy ? 'busy' : 'no_answer';
  if (call.end_reason === 'voicemail' || (call.answered_by ?? '').startsWith('machine')) return 'voicemail';
  return 'answered';
}

export function nextState(outcome: AttemptOutcome, attempts: number, retry: CampaignRetry): ContactState {
  if (retry.retry_on.includes(outcome) && attempts < retry.max_attempts) return 'retry_wait';
  return outcome === 'answered' || outcome === 'voicemail' ? 'done' : 'failed';
}

/**
 * Reads the calls of the campaign's dialled attempts that have ended and moves their attempts and
 * contacts on. Returns how many ended. Safe to run twice: only `dialled` attempts are read.
 */
export async function reconcileEndedCalls(db: Database, campaignId: string, retry: CampaignRetry, now: Date): Promise<number> {
  const { sequelize } = db;
  // A decision whose call exists was dialled even if the process died before saying so.
  await sequelize.query(
    `UPDATE campaign_attempts a SET state = 'dialled', dialled_at = COALESCE(a.dialled_at, c.created_at), updated_at = now()
     FROM calls c WHERE c.id = a.id AND a.campaign_id = :campaignId AND a.state = 'decided'`,
    { replacements: { campaignId } },
  );
  const ended = await sequelize.query<EndedAttempt>(
    `SELECT a.id, a.contact_id, a.attempt, c.status, c.end_reason, c.answered_by, c.end_time,
            EXISTS (SELECT 1 FROM call_events e WHERE e.call_id = c.id AND e.event_type = 'call_status'
                    AND e.data->>'provider_status' = 'busy') AS busy
     FROM campaign_attempts a JOIN calls c ON c.id = a.id
     WHERE a.campaign_id = :campaignId AND a.state = 'dialled' AND c.status IN ('completed', 'failed', 'no_answer')`,
    { replacements: { campaignId }, type: QueryTypes.SELECT },
  );
  for (const a of ended) {
    const outcome = outcomeOf(a);
    const state = nextState(outcome, a.attempt, retry);
    await sequelize.transaction(async (transaction) => {
      await sequelize.query(`UPDATE campaign_attempts SET state = 'ended', outcome = :outcome, ended_at = :endedAt, updated_at = now() WHERE id = :id`, {
        replacements: { id: a.id, outcome, endedAt: a.end_time ?? now },
        transaction,
      });
      await sequelize.query(
        `UPDATE campaign_contacts SET state = :state, last_outcome = :outcome, updated_at = now(),
                next_attempt_at = CASE WHEN :state = 'retry_wait' THEN CAST(:due AS timestamptz) ELSE NULL END
         WHERE id = :contactId AND last_call_id = :id`,
        { replacements: { state, outcome, contactId: a.contact_id, id: a.id, due: new Date(now.getTime() + retry.min_interval_secs * 1000) }, transaction },
      );
    });
  }
  return ended.length;
}
