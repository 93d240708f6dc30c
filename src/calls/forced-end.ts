/**
 * The last resort of POST /api/calls/end: a call whose workflow does not end it in time (no worker
 * runs it, or its task fails on every attempt) is terminated in Temporal and recorded here as
 * failed, so it frees its slot and its record tells what happened. Events continue the call's own
 * sequence; events the workflow had not written yet are lost with it.
 */
import type { Database } from '../db/database';
import type { CallRow } from '../db/models';
import { isFinal } from '../../workflows/call-status';

export async function recordForcedEnd(db: Database, callId: string, message: string): Promise<void> {
  await db.sequelize.transaction(async (transaction) => {
    const call = await db.models.Call.findByPk(callId, { transaction, lock: transaction.LOCK.UPDATE });
    const row = call?.get({ plain: true }) as CallRow | undefined;
    if (!call || !row || isFinal(row.status)) return;
    const endTime = new Date();
    const startTime = row.start_time;
    const duration = startTime ? Math.max(0, (endTime.getTime() - startTime.getTime()) / 1000) : null;
    const lastSeq = ((await db.models.CallEvent.max('seq', { where: { call_id: callId }, transaction })) as number | null) ?? 0;
    const ended = { status: 'failed', end_reason: 'error', duration } as const;
    await db.models.CallEvent.bulkCreate(
      [
        { call_id: callId, seq: lastSeq + 1, event_type: 'error', timestamp: endTime, data: { message, context: 'workflow' } },
        { call_id: callId, seq: lastSeq + 2, event_type: 'call_ended', timestamp: endTime, data: { ...ended, source: 'api' } },
      ],
      { transaction },
    );
    await call.update({ ...ended, end_time: endTime }, { transaction });
  });
}
