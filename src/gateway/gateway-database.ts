/**
 * The gateway's own small connection pool to PostgreSQL: its presence row (admission/presence.ts)
 * and the `in_progress` write at stream start (answered-calls.ts). Short timeouts: a stuck
 * database must never stall the gateway's calls.
 */
import { Pool } from 'pg';
import type { Logger } from '../shared/logger';

export function openGatewayDatabase(databaseUrl: string, log: Logger): Pool {
  // One presence row a second plus one short UPDATE per call start: three connections are plenty.
  const pool = new Pool({ connectionString: databaseUrl, max: 3, connectionTimeoutMillis: 2000, query_timeout: 2000 });
  pool.on('error', (err) => log.warn('gateway database connection lost', { error: err.message }));
  return pool;
}
