/**
 * max_concurrent per telephony provider, shared by every API instance: the count is the calls
 * rows themselves (status ringing or in_progress), read under a transaction-scoped advisory lock
 * keyed by the provider, in the same transaction that inserts the new call row. Two instances
 * admitting a call at the same moment therefore serialise on the lock, and the second one counts
 * the first one's row once it has committed (READ COMMITTED takes a fresh snapshot per statement).
 */
import { QueryTypes, type Transaction } from 'sequelize';
import type { Database } from '../db/database';

/** Statuses that occupy a slot: the provider is dialing or the call is connected. */
export const ACTIVE_CALL_STATUSES = ['ringing', 'in_progress'] as const;

export class CapacityError extends Error {
  constructor(
    readonly provider: string,
    readonly maxConcurrent: number,
  ) {
    super(`All ${maxConcurrent} concurrent ${provider} call slots are in use (max_concurrent); try again later`);
  }
}

/** Calls of `provider` currently holding a slot. */
export async function activeCallCount(db: Database, provider: string, transaction?: Transaction): Promise<number> {
  const rows = await db.sequelize.query<{ n: string }>(
    `SELECT count(*) AS n FROM calls WHERE provider = :provider AND status IN (:statuses)`,
    { replacements: { provider, statuses: [...ACTIVE_CALL_STATUSES] }, type: QueryTypes.SELECT, transaction },
  );
  return Number(rows[0]?.n ?? 0);
}

/** Calls holding a slot, by provider (null: text and web calls) and status (the metrics gauge). */
export async function activeCallsByProvider(db: Database): Promise<Array<{ provider: string | null; status: string; count: number }>> {
  const rows = await db.sequelize.query<{ provider: string | null; status: string; n: string }>(
    `SELECT provider, status, count(*) AS n FROM calls WHERE status IN (:statuses) GROUP BY provider, status`,
    { replacements: { statuses: [...ACTIVE_CALL_STATUSES] }, type: QueryTypes.SELECT },
  );
  return rows.map((r) => ({ provider: r.provider, status: r.status, count: Number(r.n) }));
}

/**
 * An `admit` hook for startCall: takes the provider's advisory lock for the rest of the
 * transaction and refuses (CapacityError) when `maxConcurrent` calls already hold a slot.
 */
export function capacityCheck(db: Database, provider: string, maxConcurrent: number) {
  return async (transaction: Transaction): Promise<void> => {
    await db.sequelize.query(`SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))`, {
      replacements: { key: `vap:max_concurrent:${provider}` },
      type: QueryTypes.SELECT,
      transaction,
    });
    if ((await activeCallCount(db, provider, transaction)) >= maxConcurrent) throw new CapacityError(provider, maxConcurrent);
  };
}
