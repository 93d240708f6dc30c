/**
 * A call whose audio flows is `in_progress` from its first word, and held by this gateway: when
 * the provider's stream starts, before the greeting plays, the gateway writes both to the call's
 * row itself. The workflow learns them from `mediaConnected` a signal and a workflow task later
 * (hundreds of ms under load) and writes the same with its `call_status` event once the greeting
 * has played (call-recorder.ts, `defer`); its writes are idempotent (activities/persistence.ts
 * never takes a row back to `ringing`). So the gateway watchdog finds the call from its first
 * second should this gateway die.
 *
 * Only a live row: one that is final (ended meanwhile) is left as it is, and a gateway already
 * named stays (a second stream of the call elsewhere must not take the watchdog off the first; the
 * workflow names the gateway of a transfer's new stream). A failed write is logged and the call
 * goes on: the workflow's write follows.
 */
import type { Pool } from 'pg';
import type { Logger } from '../../shared/logger';

/** The greeting waits at most this long for the write (a stuck database must not hold it). */
export const ANSWERED_WRITE_WAIT_MS = 250;

export class AnsweredCalls {
  /** `pool`: the gateway's (gateway-database.ts); its owner ends it. `gatewayId`: its task queue. */
  constructor(
    private readonly pool: Pool,
    private readonly gatewayId: string,
    private readonly log: Logger,
  ) {}

  /** Marks the call in progress (from `atMs`, epoch ms) on this gateway; resolves when written or given up. */
  async mark(callId: string, atMs: number): Promise<void> {
    try {
      await this.pool.query(
        `UPDATE calls SET gateway_id = COALESCE(gateway_id, $3), updated_at = now(),
            start_time = CASE WHEN status = 'ringing' THEN COALESCE(start_time, to_timestamp($2 / 1000.0)) ELSE start_time END,
            status = 'in_progress'
          WHERE id = $1 AND status IN ('ringing', 'in_progress')`,
        [callId, atMs, this.gatewayId],
      );
    } catch (err) {
      this.log.warn('could not mark the call in progress at stream start', { callId, error: (err as Error).message });
    }
  }
}
