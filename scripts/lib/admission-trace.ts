/**
 * The bench's view of admission: the gateway's presence row (src/gateway/admission/presence.ts)
 * read once a second during the calls, so a run shows how the room it offered followed its load
 * — whether a burst was admitted faster than the load figure rose.
 */
import type { Database } from '../../src/db/database';

interface Sample {
  atSecs: number;
  calls: number;
  room: number | null;
  load: number;
  /** Event-loop delay p99 (ms) and process CPU (cores) of the last second: which drove the load. */
  lagMs: number;
  cpu: number;
  /** The longest a call waited for its workflow's first request in the last second (ms). */
  handoffMs: number;
  admitting: boolean;
}

const format = (s: Sample) =>
  `${s.atSecs}s:${s.calls}/${s.room ?? '-'}@${s.load.toFixed(2)}(${Math.round(s.lagMs)},${s.cpu.toFixed(2)},${(s.handoffMs / 1000).toFixed(1)}s)${s.admitting ? '' : '!'}`;

export class AdmissionTrace {
  private readonly samples: Sample[] = [];
  private timer: NodeJS.Timeout | null = null;
  private startedAt = 0;

  constructor(private readonly db: Database) {}

  start(): void {
    this.startedAt = Date.now();
    this.timer = setInterval(() => void this.sample(), 1000);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** One line: `s:calls/room@load(lag ms,cpu,hand-off lag)` for each of the first `seconds` seconds (`!` = not admitting). */
  summary(seconds = 20): string {
    return this.samples.slice(0, seconds).map(format).join(' ');
  }

  /** The same, for the seconds within `margin` of any of `atSecs` (seconds since the first call). */
  around(atSecs: number[], margin = 1): string {
    return this.samples.filter((s) => atSecs.some((at) => Math.abs(s.atSecs - at) <= margin)).map(format).join(' ');
  }

  private async sample(): Promise<void> {
    const atSecs = Math.round((Date.now() - this.startedAt) / 1000);
    const [rows] = await this.db.sequelize.query(`SELECT calls, room, load, loop_lag_ms, cpu, handoff_lag_ms, admitting FROM gateways WHERE state = 'active'`).catch(() => [[]]);
    const row = (rows as Array<{ calls: number; room: number | null; load: number; loop_lag_ms: number; cpu: number; handoff_lag_ms: number | null; admitting: boolean }>)[0];
    if (row) this.samples.push({ atSecs, calls: row.calls, room: row.room, load: row.load, lagMs: Number(row.loop_lag_ms), cpu: Number(row.cpu), handoffMs: Number(row.handoff_lag_ms ?? 0), admitting: row.admitting });
  }
}
