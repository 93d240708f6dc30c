/**
 * Login throttling that holds under concurrency and across API instances: every attempt is
 * counted in PostgreSQL *before* the password is checked, with one atomic upsert per key, so 200
 * parallel guesses cannot all slip through between a read and a write. Attempts are counted per
 * client address and per account (the email, hashed); a success clears both counters.
 */
import { QueryTypes } from 'sequelize';
import type { Database } from '../../db/database';
import { sha256Hex } from '../../security/crypto';

export const LOGIN_WINDOW_SECS = 15 * 60;
// Ten tries covers honest typos; a password-guessing script is slowed to 40 guesses an hour per
// address and per account.
export const LOGIN_MAX_ATTEMPTS = 10;

export interface ThrottleVerdict {
  allowed: boolean;
  /** Seconds until the fullest window ends (for Retry-After). */
  retryAfterSecs: number;
}

/** The throttle keys of one login: the client's address and the account (never stored in clear). */
export function loginKeys(address: string | undefined, email: string): string[] {
  return [`ip:${address ?? 'unknown'}`, `account:${sha256Hex(email.trim().toLowerCase())}`];
}

// A window that has run out starts over at this attempt; otherwise the attempt adds one.
const COUNT_ATTEMPT = `
  INSERT INTO login_attempts AS a (key, window_started_at, attempts) VALUES ($1, now(), 1)
  ON CONFLICT (key) DO UPDATE SET
    window_started_at = CASE WHEN a.window_started_at <= now() - make_interval(secs => $2) THEN now() ELSE a.window_started_at END,
    attempts = CASE WHEN a.window_started_at <= now() - make_interval(secs => $2) THEN 1 ELSE a.attempts + 1 END
  RETURNING a.attempts AS attempts, EXTRACT(EPOCH FROM a.window_started_at + make_interval(secs => $2) - now())::float AS remaining_secs`;

export interface WindowLimit {
  key: string;
  windowSecs: number;
  max: number;
}

/**
 * Counts one attempt under every key, each in its own fixed window; refused when any key is over
 * its limit. The login throttle uses it, and so does the publishable keys' rate limit
 * (docs/web-calls.md), whose keys are prefixed apart in the same table.
 */
export async function countInWindows(db: Database, limits: WindowLimit[]): Promise<ThrottleVerdict> {
  let allowed = true;
  let retryAfterSecs = 0;
  // One statement per key, each atomic on its own row; keys in a fixed order never deadlock.
  for (const limit of [...limits].sort((a, b) => a.key.localeCompare(b.key))) {
    const [row] = await db.sequelize.query<{ attempts: number; remaining_secs: number }>(COUNT_ATTEMPT, {
      bind: [limit.key, limit.windowSecs],
      type: QueryTypes.SELECT,
    });
    if (row!.attempts > limit.max) {
      allowed = false;
      retryAfterSecs = Math.max(retryAfterSecs, Math.max(1, Math.ceil(row!.remaining_secs)));
    }
  }
  return { allowed, retryAfterSecs };
}

/** Counts one login attempt under every key; refused when any key is over the limit in its window. */
export async function countAttempt(db: Database, keys: string[]): Promise<ThrottleVerdict> {
  return countInWindows(db, keys.map((key) => ({ key, windowSecs: LOGIN_WINDOW_SECS, max: LOGIN_MAX_ATTEMPTS })));
}

/** After a successful login: the counters start over, and windows that ran out are dropped. */
export async function clearAttempts(db: Database, keys: string[]): Promise<void> {
  await db.sequelize.query(`DELETE FROM login_attempts WHERE key = ANY($1) OR window_started_at < now() - make_interval(secs => $2)`, {
    bind: [keys, LOGIN_WINDOW_SECS],
  });
}
