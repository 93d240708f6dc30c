/**
 * Whether a database error is PostgreSQL being away (retry later) rather than PostgreSQL refusing
 * what was asked (a bug or bad data). Shared by the persistence activity (retry for as long as the
 * outage lasts) and the API (503 with Retry-After instead of a 500).
 */
import { ConnectionError, DatabaseError } from 'sequelize';

// SQLSTATE classes of failures that go away: connection exception, transaction rollback
// (serialization failure, deadlock), insufficient resources, operator intervention, system error.
const TRANSIENT_SQLSTATE_CLASSES = new Set(['08', '40', '53', '57', '58']);

export function sqlState(err: unknown): string | undefined {
  return ((err as { parent?: { code?: unknown } }).parent?.code as string | undefined) ?? undefined;
}

export function isDatabaseOutage(err: unknown): boolean {
  if (err instanceof ConnectionError) return true;
  const state = sqlState(err);
  // A DatabaseError without a SQLSTATE is the client losing its connection mid-query.
  if (err instanceof DatabaseError) return state === undefined || TRANSIENT_SQLSTATE_CLASSES.has(state.slice(0, 2));
  return false;
}
