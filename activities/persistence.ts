/**
 * Writes a call's events and record changes. Idempotent: events are keyed by (call_id, seq) and the
 * patch holds absolute values, so a retry after a crash changes nothing twice.
 */
import type { ActivityDeps } from '.';
import type { CallEventRecord, CallRecordPatch } from '../workflows/call-definitions';

export function createPersistenceActivities({ db }: ActivityDeps) {
  return {
    async persistCall(input: { callId: string; events: CallEventRecord[]; patch: CallRecordPatch }): Promise<void> {
      const { callId, events, patch } = input;
      await db.sequelize.transaction(async (transaction) => {
        if (events.length) {
          await db.models.CallEvent.bulkCreate(
            events.map((e) => ({ call_id: callId, seq: e.seq, event_type: e.type, timestamp: new Date(e.timestampMs), data: e.data })),
            { ignoreDuplicates: true, transaction },
          );
        }
        const { start_time, end_time, ...rest } = patch;
        const values: Record<string, unknown> = { ...rest };
        if (start_time !== undefined) values.start_time = start_time === null ? null : new Date(start_time);
        if (end_time !== undefined) values.end_time = end_time === null ? null : new Date(end_time);
        if (Object.keys(values).length) await db.models.Call.update(values, { where: { id: callId }, transaction });
      });
    },
  };
}
