/**
 * The turns a turn run has answered but not yet reported, kept in PostgreSQL (call_turn_journal)
 * so that a gateway that dies does not take them with it: the workflow reads them back when it
 * loses the gateway (`readRunJournal` in activities/persistence.ts). One INSERT per such turn, on the gateway's own
 * small pool (gateway-database.ts).
 */
import type { Pool } from 'pg';
import type { RunTurn } from '../../../workflows/call-definitions';
import type { Logger } from '../../shared/logger';

export class RunJournal {
  constructor(
    private readonly pool: Pool,
    private readonly log: Logger,
  ) {}

  /** Rejects if it could not be written (the run then reports at once instead of holding the turn). */
  async write(callId: string, turn: RunTurn): Promise<void> {
    try {
      await this.pool.query('INSERT INTO call_turn_journal (call_id, seq, turn) VALUES ($1, $2, $3) ON CONFLICT (call_id, seq) DO NOTHING', [callId, turn.utterance.seq, JSON.stringify(turn)]);
    } catch (err) {
      this.log.warn('could not journal a turn run: it reports now', { callId, error: (err as Error).message });
      throw err;
    }
  }

  /** The call's stream ended on this gateway: whatever its runs held has been reported (or is in its outbox). */
  clear(callId: string): void {
    this.pool.query('DELETE FROM call_turn_journal WHERE call_id = $1', [callId]).catch((err: Error) => {
      this.log.warn('could not clear the call turn journal', { callId, error: err.message });
    });
  }
}
