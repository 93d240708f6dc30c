/**
 * A statement with a budget: `SET LOCAL statement_timeout` sent in the same message as the
 * statement. One simple query is one implicit transaction, so the timeout bounds that statement
 * only, costs no round trip of its own and holds no transaction open between statements; past it
 * PostgreSQL cancels the statement, so a search a turn gave up on does not keep a pooled connection
 * (abandoned searches waiting on a locked chunk table once held all of a worker's connections, and
 * its calls stopped: knowledge-timeout.test.ts).
 */
export function bounded(sql: string, timeoutMs: number | undefined): string {
  return timeoutMs === undefined ? sql : `SET LOCAL statement_timeout = ${Math.max(1, Math.ceil(timeoutMs))}; ${sql}`;
}

/**
 * Whether `err` is PostgreSQL cancelling a bounded statement (SQLSTATE 57014, query_canceled).
 * The server's timer and the turn's own start together, so either may fire first: both are the
 * same timeout to the caller. Sequelize keeps the driver's error as `original` (and `parent`).
 */
export function isStatementTimeout(err: unknown): boolean {
  const e = err as { code?: unknown; original?: { code?: unknown }; parent?: { code?: unknown } } | null;
  return [e?.code, e?.original?.code, e?.parent?.code].includes('57014');
}
