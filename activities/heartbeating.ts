import { heartbeat } from '@temporalio/activity';

const HEARTBEAT_MS = 1000;

/**
 * Heartbeats while `work` runs: a worker that dies mid-activity is noticed within the activity's
 * heartbeat timeout, and the retry starts then rather than at its start-to-close timeout.
 */
export async function heartbeating<T>(work: Promise<T>): Promise<T> {
  const beat = setInterval(() => heartbeat(), HEARTBEAT_MS);
  try {
    return await work;
  } finally {
    clearInterval(beat);
  }
}
