/**
 * The CPU the machine's background work used: processes niced above BACKGROUND_NICE (a batch job,
 * a build, another team's tests at `nice 19`). They run on cores the gateway leaves idle and yield
 * them the moment it wants them, so the machine's CPU that admission judges (load-meter.ts,
 * `hostCpu`) leaves them out: counted, a single `nice 19` compile on a 2-core VM read as a full
 * machine and capped an idle gateway at GATEWAY_MIN_CALLS (bench:voice, 2026-12-02: 4 of 50 calls
 * admitted, 46 refused at 0.06 of a core of its own). The platform's own lower-priority processes
 * (`npm start` runs Temporal at nice 10, the benchmark the worker and the API too) still count:
 * when they starve, the calls' turns wait for their workflow tasks.
 *
 * Read from /proc/<pid>/stat (utime, stime, nice) each reading: ~2 ms for ~120 processes. A
 * process that used CPU and exited between two readings is not seen, so its CPU stays counted
 * as busy (the safe side). Without /proc (macOS) nothing is subtracted.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Processes niced above this are background: the platform's own run at 10 at the lowest. */
export const BACKGROUND_NICE = 10;
/** /proc's times are in clock ticks: USER_HZ, 100 on Linux's architectures. */
const MS_PER_TICK = 10;

export class BackgroundCpu {
  private ticks = new Map<number, number>();
  private primed = false;

  constructor(
    private readonly procDir = '/proc',
    private readonly minNice = BACKGROUND_NICE + 1,
  ) {}

  /** CPU-ms the background processes used since the last call (0 on the first). */
  msSinceLast(): number {
    const seen = new Map<number, number>();
    let used = 0;
    for (const entry of this.pids()) {
      const stat = this.stat(entry);
      if (!stat || stat.nice < this.minNice) continue;
      seen.set(entry, stat.ticks);
      // New since the last reading: all of its time is within the interval.
      used += stat.ticks - (this.ticks.get(entry) ?? 0);
    }
    const wasPrimed = this.primed;
    this.ticks = seen;
    this.primed = true;
    return wasPrimed ? Math.max(0, used) * MS_PER_TICK : 0;
  }

  private pids(): number[] {
    try {
      return fs.readdirSync(this.procDir).filter((name) => /^\d+$/.test(name)).map(Number);
    } catch {
      return [];
    }
  }

  private stat(pid: number): { ticks: number; nice: number } | null {
    let text: string;
    try {
      text = fs.readFileSync(path.join(this.procDir, String(pid), 'stat'), 'utf8');
    } catch {
      return null; // exited meanwhile
    }
    // After the command's closing parenthesis (the command may hold spaces and parentheses):
    // field 3 (state) onwards; utime is field 14, stime 15, nice 19.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const nice = Number(fields[16]);
    return Number.isFinite(ticks) && Number.isFinite(nice) ? { ticks, nice } : null;
  }
}
