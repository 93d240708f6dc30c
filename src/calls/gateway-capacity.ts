/**
 * Admission of voice calls by media gateway capacity (docs/call-lifecycle.md, "Load, admission
 * and refusal"). Every gateway publishes its presence row once a second: whether it admits calls
 * (active, load under GATEWAY_MAX_LOAD, fewer than GATEWAY_MAX_CALLS) and how many it holds. A new
 * call is admitted when the calls already ringing or live fit the room of the live gateways: an
 * admitting gateway offers the room its load projects (`room`, src/gateway/admission/room-estimate.ts;
 * max_calls from a gateway that does not say), one that is full or draining only the calls it holds.
 * The count runs under an advisory lock in the transaction that inserts the call row, so API
 * instances admitting at the same moment take turns, as for max_concurrent.
 */
import { QueryTypes, type Transaction } from 'sequelize';
import type { Config } from '../config';
import type { Database } from '../db/database';
import { ACTIVE_CALL_STATUSES } from './concurrency';

/** Channels whose audio runs through a media gateway. */
export const GATEWAY_CHANNELS = ['voice', 'web'] as const;

export type RefusalReason = 'no_gateway' | 'at_capacity';

export class GatewayCapacityError extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
  }
}

export interface GatewayRoom {
  /** Live gateways (seen within GATEWAY_LIVENESS_SECS, active or draining). */
  gateways: number;
  admitting: number;
  /** Calls the live gateways can hold now. */
  capacity: number;
  /** Voice calls ringing or live. */
  inUse: number;
}

export async function gatewayRoom(db: Database, config: Pick<Config, 'GATEWAY_LIVENESS_SECS'>, transaction?: Transaction): Promise<GatewayRoom> {
  const [room] = await db.sequelize.query<{ gateways: string; admitting: string; capacity: string | null }>(
    `SELECT count(*) AS gateways, count(*) FILTER (WHERE admitting) AS admitting,
            sum(CASE WHEN admitting THEN greatest(coalesce(room, max_calls), calls) ELSE calls END) AS capacity
     FROM gateways WHERE state IN ('active', 'draining') AND seen_at > now() - make_interval(secs => :secs)`,
    { replacements: { secs: config.GATEWAY_LIVENESS_SECS }, type: QueryTypes.SELECT, transaction },
  );
  const [used] = await db.sequelize.query<{ n: string }>(`SELECT count(*) AS n FROM calls WHERE channel IN (:channels) AND status IN (:statuses)`, {
    replacements: { channels: [...GATEWAY_CHANNELS], statuses: [...ACTIVE_CALL_STATUSES] },
    type: QueryTypes.SELECT,
    transaction,
  });
  return { gateways: Number(room?.gateways ?? 0), admitting: Number(room?.admitting ?? 0), capacity: Number(room?.capacity ?? 0), inUse: Number(used?.n ?? 0) };
}

/** An `admit` hook for startCall: refuses (GatewayCapacityError) a call no gateway has room for. */
export function gatewayAdmission(db: Database, config: Pick<Config, 'GATEWAY_ADMISSION' | 'GATEWAY_LIVENESS_SECS'>) {
  return async (transaction: Transaction): Promise<void> => {
    if (config.GATEWAY_ADMISSION === 'off') return;
    await db.sequelize.query(`SELECT pg_advisory_xact_lock(hashtextextended('vap:gateway-capacity', 0))`, { type: QueryTypes.SELECT, transaction });
    const room = await gatewayRoom(db, config, transaction);
    if (room.gateways === 0) throw new GatewayCapacityError('no_gateway', 'No media gateway is running: voice calls cannot be carried right now');
    if (room.admitting === 0 || room.inUse >= room.capacity) {
      throw new GatewayCapacityError('at_capacity', `The media gateways are at capacity (${room.inUse} calls for room of ${room.capacity}); try again later`);
    }
  };
}

/** Runs several admit hooks in order (each may take its own lock). */
export function allOf(...checks: Array<(transaction: Transaction) => Promise<void>>) {
  return async (transaction: Transaction): Promise<void> => {
    for (const check of checks) await check(transaction);
  };
}
