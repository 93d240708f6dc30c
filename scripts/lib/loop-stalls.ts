/**
 * Stalls of the benchmark callers' event loop that are not garbage collections: the thread
 * descheduled on a saturated machine, or busy with a burst of frames. Like a collection, a stall
 * stops every simulated caller's clock at once, so frames played then look late although the
 * platform sent them on time. A ticker every TICK_MS records how late it fired.
 */
import { overlapping, type GcPause, type PauseLog } from './gc-pauses';

const TICK_MS = 5;
/** A tick this late is a stall: it can make a 20 ms frame read as a gap over 40 ms. */
const STALL_MS = 20;

/** Stalls recorded elsewhere (the callers' thread), read back. */
export function stallLog(stalls: GcPause[]): PauseLog {
  const longest = stalls.reduce((m, s) => Math.max(m, s.ms), 0);
  return { within: (fromMs, toMs) => overlapping(stalls, fromMs, toMs), summary: () => `${stalls.length} over ${STALL_MS} ms, longest ${longest.toFixed(0)} ms` };
}

export class LoopStalls {
  readonly stalls: GcPause[] = [];
  private timer: NodeJS.Timeout | null = null;

  start(): void {
    let expected = Date.now() + TICK_MS;
    this.timer = setInterval(() => {
      const now = Date.now();
      if (now - expected >= STALL_MS) this.stalls.push({ atMs: expected, ms: now - expected, kind: 'other' });
      expected = now + TICK_MS;
    }, TICK_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
