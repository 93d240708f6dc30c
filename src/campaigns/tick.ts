/**
 * One step of a campaign (run as an activity by workflows/campaign-workflow.ts): read what ended,
 * apply the stop rule, finish a campaign with nothing left, and decide which contacts to call now
 * — inside their calling hours, within max_concurrent, calls_per_minute and the provider's lines
 * less reserved_inbound. Decisions are written (attempt rows, contacts `calling`) before they are
 * returned, so a crash after this step replays the same attempts rather than new ones.
 */
import { QueryTypes, type Transaction } from 'sequelize';
import { plain, type Database } from '../db/database';
import type { CampaignRow, CampaignStatus } from '../db/models/campaigns';
import type { TelephonySettings } from '../providers/telephony/settings-store';
import { attemptId } from './attempt-id';
import { reconcileEndedCalls } from './outcomes';
import { isOpen, nextOpening } from './windows';

export interface TickResult {
  status: CampaignStatus;
  /** The campaign is over (completed or cancelled, with no call of it still in flight). */
  finished: boolean;
  /** Attempts to dial now, in order. */
  dials: string[];
  /** Between two dials, to hold calls_per_minute. */
  spacingMs: number;
  /** When the next step is worth taking (calls in flight: the poll interval). */
  sleepMs: number;
  /** With nothing to dial and nothing in flight: when the next contact falls due (hours, retry). */
  nextDueAt?: string | null;
}

const LIVE = `('pending', 'retry_wait', 'calling')`;
// With nothing in flight and nothing due, look again at least this often (a missed signal).
const IDLE_SLEEP_MS = 3600_000;

async function count(db: Database, sql: string, replacements: Record<string, unknown>, transaction?: Transaction): Promise<number> {
  const [row] = await db.sequelize.query<{ n: string }>(sql, { replacements, type: QueryTypes.SELECT, transaction });
  return Number(row?.n ?? 0);
}

/** Decided attempts not dialled go back: their contacts return to where they were. */
async function undoUndialled(db: Database, campaignId: string): Promise<void> {
  await db.sequelize.transaction(async (transaction) => {
    const undone = await db.sequelize.query<{ contact_id: string; attempt: number }>(
      `DELETE FROM campaign_attempts a WHERE a.campaign_id = :campaignId AND a.state = 'decided'
         AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.id = a.id) RETURNING contact_id, attempt`,
      { replacements: { campaignId }, type: QueryTypes.SELECT, transaction },
    );
    for (const u of undone) {
      await db.sequelize.query(
        `UPDATE campaign_contacts SET attempts = :prev, updated_at = now(),
                state = CASE WHEN :prev = 0 THEN 'pending' ELSE 'retry_wait' END,
                next_attempt_at = CASE WHEN :prev = 0 THEN NULL ELSE now() END
         WHERE id = :id AND state = 'calling'`,
        { replacements: { id: u.contact_id, prev: u.attempt - 1 }, transaction },
      );
    }
  });
}

export async function campaignTick(
  db: Database,
  settings: Pick<TelephonySettings, 'provider' | 'vendors'>,
  campaignId: string,
  now: Date,
  pollMs: number,
): Promise<TickResult> {
  const { Campaign } = db.models;
  const campaign = plain(await Campaign.findByPk(campaignId));
  if (!campaign) return { status: 'cancelled', finished: true, dials: [], spacingMs: 0, sleepMs: 0 };
  const id = campaign.id;
  await reconcileEndedCalls(db, id, campaign.retry, now);
  const inFlight = await count(db, `SELECT count(*) AS n FROM campaign_attempts WHERE campaign_id = :id AND state IN ('decided', 'dialled')`, { id });
  const spacingMs = Math.ceil(60_000 / campaign.pacing.calls_per_minute);
  const idle = (status: CampaignStatus, finished = false): TickResult => ({ status, finished, dials: [], spacingMs, sleepMs: inFlight ? pollMs : IDLE_SLEEP_MS });

  if (campaign.status !== 'running' && campaign.status !== 'scheduled') {
    await undoUndialled(db, id);
    const settled = await count(db, `SELECT count(*) AS n FROM campaign_attempts WHERE campaign_id = :id AND state IN ('decided', 'dialled')`, { id });
    return { ...idle(campaign.status, (campaign.status === 'cancelled' || campaign.status === 'completed') && settled === 0), sleepMs: settled ? pollMs : IDLE_SLEEP_MS };
  }
  if (await tripCircuitBreaker(db, campaign, now)) return idle('paused');

  const live = await count(db, `SELECT count(*) AS n FROM campaign_contacts WHERE campaign_id = :id AND state IN ${LIVE}`, { id });
  const ended = campaign.schedule.end_at !== null && now >= new Date(campaign.schedule.end_at);
  if (live === 0 || (ended && inFlight === 0)) {
    const reason = live === 0 ? null : 'the schedule ended';
    await Campaign.update({ status: 'completed', status_reason: reason, ended_at: now }, { where: { id, status: campaign.status } });
    return { ...idle('completed', inFlight === 0) };
  }
  if (ended) return idle(campaign.status);
  if (campaign.schedule.start_at && now < new Date(campaign.schedule.start_at)) {
    return { ...idle('scheduled'), sleepMs: inFlight ? pollMs : new Date(campaign.schedule.start_at).getTime() - now.getTime() };
  }
  if (campaign.status === 'scheduled') await Campaign.update({ status: 'running', started_at: campaign.started_at ?? now }, { where: { id, status: 'scheduled' } });

  // Attempts decided earlier and never dialled (a crash, an admission wait) go first.
  const undialled = await db.sequelize.query<{ id: string }>(
    `SELECT a.id FROM campaign_attempts a WHERE a.campaign_id = :id AND a.state = 'decided' AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.id = a.id) ORDER BY a.created_at`,
    { replacements: { id }, type: QueryTypes.SELECT },
  );
  const room = await freeLines(db, campaign, settings, now, inFlight);
  const dials = undialled.map((a) => a.id);
  if (room > 0) dials.push(...(await decide(db, campaign, now, room)));

  if (dials.length || inFlight) return { status: 'running', finished: false, dials, spacingMs, sleepMs: pollMs };
  const due = await nextDue(db, campaign, now);
  // A long wait is taken in pieces of at most an hour: each piece re-reads the row.
  const wait = due ? Math.min(due.getTime() - now.getTime(), IDLE_SLEEP_MS) : IDLE_SLEEP_MS;
  return { status: 'running', finished: false, dials, spacingMs, sleepMs: Math.max(wait, 50), nextDueAt: due?.toISOString() ?? null };
}

/** How many new attempts may start now. */
async function freeLines(db: Database, campaign: CampaignRow, settings: Pick<TelephonySettings, 'provider' | 'vendors'>, now: Date, inFlight: number): Promise<number> {
  const { pacing } = campaign;
  const lastMinute = await count(db, `SELECT count(*) AS n FROM campaign_attempts WHERE campaign_id = :id AND created_at > :since`, {
    id: campaign.id,
    since: new Date(now.getTime() - 60_000),
  });
  let room = Math.min(pacing.max_concurrent - inFlight, pacing.calls_per_minute - lastMinute);
  const provider = campaign.provider ?? settings.provider;
  const lines = Number(provider ? settings.vendors[provider]?.max_concurrent : NaN);
  if (provider && Number.isFinite(lines) && lines > 0) {
    const busy = await count(db, `SELECT count(*) AS n FROM calls WHERE provider = :provider AND status IN ('ringing', 'in_progress')`, { provider });
    room = Math.min(room, lines - pacing.reserved_inbound - busy);
  }
  return Math.max(0, room);
}

/** Zones with contacts due whose calling hours are open now. */
async function openZones(db: Database, campaign: CampaignRow, now: Date): Promise<string[]> {
  const zones = await db.sequelize.query<{ timezone: string }>(
    `SELECT DISTINCT timezone FROM campaign_contacts WHERE campaign_id = :id
       AND (state = 'pending' OR (state = 'retry_wait' AND next_attempt_at <= :now))`,
    { replacements: { id: campaign.id, now }, type: QueryTypes.SELECT },
  );
  return zones.map((z) => z.timezone).filter((zone) => isOpen(campaign.schedule, zone, now));
}

async function decide(db: Database, campaign: CampaignRow, now: Date, room: number): Promise<string[]> {
  const zones = await openZones(db, campaign, now);
  if (!zones.length) return [];
  return db.sequelize.transaction(async (transaction) => {
    const due = await db.sequelize.query<{ id: string; attempts: number; phone_number: string }>(
      `SELECT id, attempts, phone_number FROM campaign_contacts WHERE campaign_id = :id AND timezone IN (:zones)
         AND (state = 'pending' OR (state = 'retry_wait' AND next_attempt_at <= :now))
       ORDER BY state = 'pending', next_attempt_at NULLS LAST, line NULLS LAST, created_at LIMIT :room FOR UPDATE SKIP LOCKED`,
      { replacements: { id: campaign.id, zones, now, room }, type: QueryTypes.SELECT, transaction },
    );
    const ids: string[] = [];
    for (const c of due) {
      const attempt = c.attempts + 1;
      const aid = attemptId(campaign.id, c.id, attempt);
      await db.sequelize.query(
        `INSERT INTO campaign_attempts (id, campaign_id, contact_id, attempt, state, created_at, updated_at)
         VALUES (:aid, :campaignId, :contactId, :attempt, 'decided', :now, :now) ON CONFLICT (id) DO NOTHING`,
        { replacements: { aid, campaignId: campaign.id, contactId: c.id, attempt, now }, transaction },
      );
      await db.sequelize.query(
        `UPDATE campaign_contacts SET state = 'calling', attempts = :attempt, last_call_id = :aid, next_attempt_at = NULL, updated_at = now() WHERE id = :contactId`,
        { replacements: { attempt, aid, contactId: c.id }, transaction },
      );
      ids.push(aid);
    }
    return ids;
  });
}

/** When a retry falls due or a closed zone's calling hours open, whichever first (null: never). */
async function nextDue(db: Database, campaign: CampaignRow, now: Date): Promise<Date | null> {
  const rows = await db.sequelize.query<{ timezone: string; due: Date | null }>(
    `SELECT timezone, min(CASE WHEN state = 'pending' THEN CAST(:now AS timestamptz) ELSE next_attempt_at END) AS due
     FROM campaign_contacts WHERE campaign_id = :id AND state IN ('pending', 'retry_wait') GROUP BY timezone`,
    { replacements: { id: campaign.id, now }, type: QueryTypes.SELECT },
  );
  let soonest: Date | null = null;
  for (const r of rows) {
    const from = r.due && new Date(r.due) > now ? new Date(r.due) : now;
    const opens = nextOpening(campaign.schedule, r.timezone, from);
    // Due and open now, yet not decided: calls_per_minute or the lines are full for a while.
    const at = opens && opens.getTime() === now.getTime() ? new Date(now.getTime() + 1000) : opens;
    if (at && (!soonest || at < soonest)) soonest = at;
  }
  return soonest;
}

/** The circuit breaker: too many failed attempts in the window pauses the campaign, with why. */
async function tripCircuitBreaker(db: Database, campaign: CampaignRow, now: Date): Promise<boolean> {
  const rule = campaign.stop_rule;
  if (rule.failure_rate === null) return false;
  const [stats] = await db.sequelize.query<{ total: string; failed: string }>(
    `SELECT count(*) AS total, count(*) FILTER (WHERE outcome = 'failed') AS failed FROM campaign_attempts
     WHERE campaign_id = :id AND state = 'ended' AND ended_at > :since`,
    { replacements: { id: campaign.id, since: new Date(Math.max(now.getTime() - rule.window_secs * 1000, campaign.resumed_at ? new Date(campaign.resumed_at).getTime() : 0)) }, type: QueryTypes.SELECT },
  );
  const total = Number(stats.total);
  const failed = Number(stats.failed);
  if (total < rule.min_sample || failed / total < rule.failure_rate) return false;
  const reason = `circuit breaker: ${failed} of the last ${total} attempts failed within ${rule.window_secs} s (threshold ${Math.round(rule.failure_rate * 100)} %)`;
  await db.models.Campaign.update({ status: 'paused', status_reason: reason }, { where: { id: campaign.id, status: campaign.status } });
  return true;
}
