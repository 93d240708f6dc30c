/**
 * CPU priority of a platform process (`NICE`). On cores shared by every part of the platform, the
 * media gateway is the one part that cannot wait: a few milliseconds of scheduling delay there is a
 * gap in a caller's audio, while the worker, the API and Temporal only answer a little later.
 * Running those at a higher nice value (lower priority; no privileges needed) lets the gateway go
 * first whenever the cores are contended, and costs nothing when they are not.
 */
import os from 'node:os';
import type { Logger } from '../shared/logger';

/** Nice value the all-in-one `npm start` gives the Temporal dev server it starts. */
export const DEV_SERVER_NICE = 10;

/** Sets the nice value of a process (default: this one); a refusal is logged, never fatal. */
export function applyNice(nice: number, log: Logger, pid = 0, what = 'this process'): void {
  if (nice === 0 && pid === 0) return;
  try {
    os.setPriority(pid, nice);
  } catch (err) {
    // A negative value needs CAP_SYS_NICE (root, or `cap_add: [SYS_NICE]` in a container).
    log.warn('could not set the CPU priority', { what, nice, error: (err as Error).message });
  }
}
