/**
 * Writes a call's events and record changes. Idempotent: events are keyed by (call_id, seq) and the
 * patch holds absolute values, so a retry after a crash changes nothing twice.
 *
 * An outage (connection lost, server restarting, deadlock) is retried by the workflow for as long
 * as it lasts. A write PostgreSQL refuses for its content is given up after a few attempts, with a
 * non-retryable failure the workflow turns into a failed call: retrying cannot fix the data.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { QueryTypes } from 'sequelize';
import { isDatabaseOutage, sqlState } from '../src/db/outage';
import type { ActivityDeps } from '.';
import type { CallEventRecord, CallRecordPatch, RunTurn } from '../workflows/call-definitions';
import { storable } from '../src/db/storable';
import { CALL_STATUSES_FINAL, isFinal } from '../workflows/call-status';

/** Attempts at a write PostgreSQL refuses before the workflow is told to give up. */
export const REFUSED_WRITE_ATTEMPTS = 3;

/** The failure handed to Temporal: the database's reason, never the SQL or the values (caller speech). */
function writeFailure(err: unknown): ApplicationFailure {
  const state = sqlState(err);
  const reason = `${state ? `${state} ` : ''}${(err as Error).message}`;
  if (isDatabaseOutage(err)) return ApplicationFailure.retryable(`PostgreSQL unavailable: ${reason}`, 'CallRecordUnavailable');
  const message = `PostgreSQL refused the write: ${reason}`;
  if (Context.current().info.attempt >= REFUSED_WRITE_ATTEMPTS) return ApplicationFailure.nonRetryable(message, 'CallRecordRefused');
  return ApplicationFailure.retryable(message, 'CallRecordRefused');
}

/** The call record's columns a write may set, with their SQL types (kept complete by the type). */
const PATCH_COLUMNS: Record<keyof CallRecordPatch, string> = {
  status: 'text',
  start_time: 'timestamptz',
  end_time: 'timestamptz',
  duration: 'float8',
  end_reason: 'text',
  current_node_key: 'text',
  llm_prompt_tokens: 'int',
  llm_completion_tokens: 'int',
  tts_characters: 'int',
  recording_path: 'text',
  gateway_id: 'text',
  analysis_status: 'text',
  analysis: 'jsonb',
  analysis_success: 'boolean',
  analysis_prompt_tokens: 'int',
  analysis_completion_tokens: 'int',
  answered_by: 'text',
  transfer_summary: 'text',
  recording_parts: 'jsonb',
};

/** A patch value as a bind parameter: times as timestamps, JSON as text (undefined never gets here). */
function parameter(column: keyof CallRecordPatch, value: unknown): unknown {
  if (value === null) return null;
  if (PATCH_COLUMNS[column] === 'timestamptz') return new Date(value as number);
  if (PATCH_COLUMNS[column] === 'jsonb') return JSON.stringify(value);
  return value;
}

/** Which call rows a patch may change: any, those not final yet, those still ringing. */
type RowGuard = 'any' | 'not-final' | 'ringing';

/**
 * The events and the record patch in one statement (a data-modifying CTE): one round trip for a
 * call's most frequent database write, atomic, and without the ORM's per-row work. Returns the
 * number of call rows changed.
 */
async function writeEventsAndPatch(db: ActivityDeps['db'], callId: string, events: CallEventRecord[], patch: CallRecordPatch, guard: RowGuard): Promise<number> {
  // $2 only when there are events: PostgreSQL refuses a parameter the statement does not use.
  const bind: unknown[] = [callId];
  if (events.length) bind.push(JSON.stringify(events.map((e) => ({ seq: e.seq, type: e.type, ms: e.timestampMs, data: e.data }))));
  const insert = `INSERT INTO call_events (call_id, seq, event_type, "timestamp", data)
    SELECT $1::uuid, e.seq, e.type, to_timestamp(e.ms / 1000.0), e.data
    FROM jsonb_to_recordset($2::jsonb) AS e(seq int, type text, ms float8, data jsonb)
    ON CONFLICT DO NOTHING`;
  const columns = (Object.keys(patch) as Array<keyof CallRecordPatch>).filter((c) => patch[c] !== undefined && c in PATCH_COLUMNS);
  if (!columns.length) {
    if (events.length) await db.sequelize.query(insert, { bind });
    return 0;
  }
  const sets = columns.map((c) => {
    bind.push(parameter(c, patch[c]));
    return `${c} = $${bind.length}::${PATCH_COLUMNS[c]}`;
  });
  if (guard === 'not-final') bind.push(CALL_STATUSES_FINAL);
  const where = guard === 'ringing' ? ` AND status = 'ringing'` : guard === 'not-final' ? ` AND status <> ALL($${bind.length}::text[])` : '';
  const update = `UPDATE calls SET ${sets.join(', ')}, updated_at = now() WHERE id = $1::uuid${where}`;
  const [, changed] = await db.sequelize.query(events.length ? `WITH written AS (${insert}) ${update}` : update, { bind, type: QueryTypes.UPDATE });
  return changed;
}

export function createPersistenceActivities({ db }: ActivityDeps) {
  return {
    async persistCall(input: { callId: string; events: CallEventRecord[]; patch: CallRecordPatch }): Promise<void> {
      const { callId } = input;
      const events = storable(input.events);
      const patch = storable(input.patch);
      // A record already final (e.g. ended by POST /api/calls/end after its workflow was
      // terminated) is not reopened by a write that was still in flight.
      const guard: RowGuard = typeof patch.status === 'string' && !isFinal(patch.status) ? 'not-final' : 'any';
      try {
        if (patch.status !== 'ringing') {
          await writeEventsAndPatch(db, callId, events, patch, guard);
          return;
        }
        // The gateway may have marked the call in progress at stream start (before the workflow
        // knew): a write from the ringing phase keeps that status and start time.
        if ((await writeEventsAndPatch(db, callId, events, patch, 'ringing')) === 0) {
          const { status: _status, start_time: _start, ...others } = patch;
          await writeEventsAndPatch(db, callId, [], others, guard);
        }
      } catch (err) {
        throw writeFailure(err);
      }
    },

    /**
     * The turns a turn run held when its gateway was lost (src/gateway/workflow-link/run-journal.ts), after
     * utterance `afterSeq`, oldest first. Read, not deleted: a retried read returns them again.
     */
    async readRunJournal(input: { callId: string; afterSeq: number }): Promise<RunTurn[]> {
      const rows = await db.sequelize.query<{ turn: RunTurn }>('SELECT turn FROM call_turn_journal WHERE call_id = $1 AND seq > $2 ORDER BY seq', {
        bind: [input.callId, input.afterSeq],
        type: QueryTypes.SELECT,
      });
      return rows.map((r) => r.turn);
    },
  };
}
