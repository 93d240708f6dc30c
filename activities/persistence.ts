/**
 * Writes a call's events and record changes. Idempotent: events are keyed by (call_id, seq) and the
 * patch holds absolute values, so a retry after a crash changes nothing twice.
 *
 * An outage (connection lost, server restarting, deadlock) is retried by the workflow for as long
 * as it lasts. A write PostgreSQL refuses for its content is given up after a few attempts, with a
 * non-retryable failure the workflow turns into a failed call: retrying cannot fix the data.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { Op } from 'sequelize';
import { isDatabaseOutage, sqlState } from '../src/db/outage';
import type { ActivityDeps } from '.';
import type { CallEventRecord, CallRecordPatch, CallStatus } from '../workflows/call-definitions';
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

export function createPersistenceActivities({ db }: ActivityDeps) {
  return {
    async persistCall(input: { callId: string; events: CallEventRecord[]; patch: CallRecordPatch }): Promise<void> {
      const { callId } = input;
      const events = storable(input.events);
      const patch = storable(input.patch);
      // No transaction: each statement is idempotent (events keyed by seq, absolute values), so a
      // write cut between them is completed by the retry — and BEGIN/COMMIT were half of the round
      // trips of a call's most frequent database write.
      try {
        if (events.length) {
          await db.models.CallEvent.bulkCreate(
            events.map((e) => ({ call_id: callId, seq: e.seq, event_type: e.type, timestamp: new Date(e.timestampMs), data: e.data })),
            { ignoreDuplicates: true },
          );
        }
        const { start_time, end_time, ...rest } = patch;
        const values: Record<string, unknown> = { ...rest };
        if (start_time !== undefined) values.start_time = start_time === null ? null : new Date(start_time);
        if (end_time !== undefined) values.end_time = end_time === null ? null : new Date(end_time);
        // A record already final (e.g. ended by POST /api/calls/end after its workflow was
        // terminated) is not reopened by a write that was still in flight.
        const reopens = typeof values.status === 'string' && !isFinal(values.status as CallStatus);
        const where = reopens ? { id: callId, status: { [Op.notIn]: CALL_STATUSES_FINAL } } : { id: callId };
        if (values.status === 'ringing') {
          // The gateway may have marked the call in progress at stream start (before the
          // workflow knew): a write from the ringing phase keeps that status and start time.
          const [kept] = await db.models.Call.update(values, { where: { id: callId, status: 'ringing' } });
          if (kept === 0) {
            const { status: _status, start_time: _start, ...others } = values;
            if (Object.keys(others).length) await db.models.Call.update(others, { where });
          }
        } else if (Object.keys(values).length) await db.models.Call.update(values, { where });
      } catch (err) {
        throw writeFailure(err);
      }
    },
  };
}
