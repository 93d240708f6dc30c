/**
 * Finds media gateways that died and tells their calls (docs/call-lifecycle.md). Runs in every
 * worker process: once a second it marks lost the gateways whose presence row went stale, and
 * signals `gatewayLost` to each live call of a lost gateway; the call workflow then probes the
 * gateway on its own task queue and ends the call only if nobody answers. Several workers may run
 * it at once: one UPDATE … RETURNING wins each row, and a signal delivered twice is harmless.
 *
 * Liveness rests on PostgreSQL, not on Temporal, so a Temporal outage never looks like a dead
 * gateway; and a gateway is only judged after the watchdog itself has reached the database for a
 * whole liveness period (gateways cannot write while the database is away either). A lost gateway
 * whose calls cannot be signalled yet (Temporal unreachable) is retried until they can.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { QueryTypes } from 'sequelize';
import type { Database } from '../db/database';
import type { Logger } from '../shared/logger';
import { callWorkflowId, gatewayLostSignal } from '../../workflows/call-definitions';
import { ACTIVE_CALL_STATUSES } from './concurrency';

export const WATCHDOG_INTERVAL_MS = 1000;
/** Stopped and lost gateways' rows are kept this long for operators, then removed. */
const FORGET_AFTER_HOURS = 24;

export interface WatchdogOptions {
  db: Database;
  temporal: Client;
  log: Logger;
  /** A gateway not seen for this long is presumed dead (GATEWAY_LIVENESS_SECS). */
  livenessSecs: number;
  intervalMs?: number;
}

export interface Watchdog {
  /** Runs one round now (tests). */
  check(): Promise<void>;
  stop(): Promise<void>;
}

export function startGatewayWatchdog(opts: WatchdogOptions): Watchdog {
  const { db, log } = opts;
  /** performance.now() since which the database has answered every round; null while it fails. */
  let dbUpSince: number | null = null;
  let running: Promise<void> = Promise.resolve();
  let rounds = 0;

  const query = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
    db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

  async function markLost(): Promise<string[]> {
    const rows = await db.sequelize.query<{ id: string }>(
      `UPDATE gateways SET state = 'lost', lost_at = now(), lost_handled = false
       WHERE state IN ('active', 'draining') AND seen_at < now() - make_interval(secs => :secs)
       RETURNING id`,
      { replacements: { secs: opts.livenessSecs }, type: QueryTypes.SELECT },
    );
    return rows.map((r) => r.id);
  }

  async function tellCalls(gatewayId: string): Promise<boolean> {
    const calls = await query<{ id: string }>(`SELECT id FROM calls WHERE gateway_id = :gatewayId AND status IN (:statuses)`, {
      gatewayId,
      statuses: [...ACTIVE_CALL_STATUSES],
    });
    let all = true;
    for (const call of calls) {
      try {
        await opts.temporal.workflow
          .getHandle(callWorkflowId(call.id))
          .signal(gatewayLostSignal, { gatewayTaskQueue: gatewayId, reason: `no presence for more than ${opts.livenessSecs} s` });
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) continue; // the call has ended meanwhile
        all = false;
        log.warn('gateway watchdog: could not tell a call its gateway is lost; retrying', { gateway_id: gatewayId, call_id: call.id, error: (err as Error).message });
        break; // Temporal unreachable: the next round tries again
      }
    }
    if (all) await db.sequelize.query(`UPDATE gateways SET lost_handled = true WHERE id = :gatewayId AND state = 'lost'`, { replacements: { gatewayId } });
    return all;
  }

  async function round(): Promise<void> {
    try {
      await query('SELECT 1');
    } catch (err) {
      if (dbUpSince !== null) log.warn('gateway watchdog: database unreachable; judging no gateway until it is back', { error: (err as Error).message });
      dbUpSince = null;
      return;
    }
    const now = performance.now();
    dbUpSince ??= now;
    try {
      if (now - dbUpSince >= opts.livenessSecs * 1000) {
        for (const id of await markLost()) log.warn('media gateway lost: no presence', { gateway_id: id, liveness_secs: opts.livenessSecs });
      }
      const pending = await query<{ id: string }>(`SELECT id FROM gateways WHERE state = 'lost' AND NOT lost_handled`);
      for (const g of pending) await tellCalls(g.id);
      if (++rounds % 3600 === 1) {
        await db.sequelize.query(
          `DELETE FROM gateways WHERE state IN ('stopped', 'lost') AND seen_at < now() - make_interval(hours => :hours) AND (state = 'stopped' OR lost_handled)`,
          { replacements: { hours: FORGET_AFTER_HOURS } },
        );
      }
    } catch (err) {
      log.warn('gateway watchdog round failed', { error: (err as Error).message });
    }
  }

  let busy = false;
  const check = () =>
    (running = running.then(async () => {
      busy = true;
      await round();
      busy = false;
    }));
  // A round slower than the interval (a stuck database) is not stacked up behind.
  const timer = setInterval(() => void (busy || check()), opts.intervalMs ?? WATCHDOG_INTERVAL_MS);
  timer.unref();
  return {
    check,
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
