/**
 * Limits repeated failed logins per client address. Failures are counted in PostgreSQL so the
 * limit holds across every API instance.
 */
import { Op } from 'sequelize';
import type { Database } from '../../db/database';

export const LOGIN_WINDOW_MS = 15 * 60 * 1000;
// Ten tries covers honest typos; a password-guessing script is slowed to 40 guesses an hour.
export const LOGIN_MAX_FAILURES = 10;

export async function failuresInWindow(db: Database, clientKey: string): Promise<number> {
  return db.models.LoginFailure.count({
    where: { client_key: clientKey, created_at: { [Op.gt]: new Date(Date.now() - LOGIN_WINDOW_MS) } },
  });
}

export async function recordFailure(db: Database, clientKey: string): Promise<void> {
  await db.models.LoginFailure.create({ client_key: clientKey });
  // Keep the table small: drop this client's entries older than the window.
  await db.models.LoginFailure.destroy({
    where: { client_key: clientKey, created_at: { [Op.lt]: new Date(Date.now() - LOGIN_WINDOW_MS) } },
  });
}

export async function clearFailures(db: Database, clientKey: string): Promise<void> {
  await db.models.LoginFailure.destroy({ where: { client_key: clientKey } });
}
