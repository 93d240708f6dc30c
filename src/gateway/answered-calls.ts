/**
 * A call whose audio flows is `in_progress` from its first word: the gateway writes the status
 * to the call's row itself when the provider's stream starts, before the greeting plays. The
 * workflow learns it from `mediaConnected` a signal and a workflow task later (hundreds of ms
 * under load) and records the same move with its `call_status` event; its later writes are
 * idempotent (activities/persistence.ts never takes a row back to `ringing`).
 *
 * Only `ringing → in_progress`: a row that is final (ended meanwhile) or already in progress is
 * left as it is. A failed write is logged and the call goes on: the workflow's write follows.
 */
import type { Pool } from 'pg';
import type { Logger } from '../shared/logger';

/** The greeting waits at most this long for the write (a stuck database must not hold it). */
export const ANSWERED_WRITE_WAIT_MS = 250;

export class AnsweredCalls {
  /** `pool`: the gateway's (gateway-database.ts); its owner ends it. */
  constructor(
    private readonly pool: Pool,
    private readonly log: Logger,
  ) {}

  /** Marks the call in progress (from `atMs`, epoch ms); resolves when written or given up. */
  async mark(callId: string, atMs: number): Promise<void> {
    try {
      await this.pool.query(
        `UPDATE calls SET status = 'in_progress', start_time = COALESCE(start_time, to_timestamp($2 / 1000.0)), updated_at = now()
          WHERE id = $1 AND status = 'ringing'`,
        [callId, atMs],
      );
    } catch (err) {
      this.log.warn('could not mark the call in progress at stream start', { callId, error: (err as Error).message });
    }
  }
}
