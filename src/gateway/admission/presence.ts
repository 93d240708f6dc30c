/**
 * The gateway's presence row in PostgreSQL (table `gateways`, docs/call-lifecycle.md): rewritten
 * every PRESENCE_INTERVAL_MS with the gateway's state, calls and load. The API reads it to decide
 * whether a new call has a gateway with room (admission); the workers' watchdog reads it to tell a
 * dead gateway from a missing Temporal. The database clock (`now()`) stamps every write, so gateway
 * clocks never matter. A failed write is logged and retried at the next tick: calls go on.
 */
import type { Pool } from 'pg';
import type { Logger } from '../../shared/logger';
import { LoadMeter, withHostCpu, type LoadReading } from './load-meter';
import { RoomEstimate } from './room-estimate';

export const PRESENCE_INTERVAL_MS = 1000;
/** Weight of the newest reading in the smoothed load: one busy second alone does not close the door. */
const LOAD_SMOOTHING = 0.5;

export type GatewayState = 'active' | 'draining' | 'stopped';

export interface PresenceOptions {
  /** The gateway's pool (gateway-database.ts); its owner ends it. */
  pool: Pool;
  /** The gateway's task queue: its id everywhere. */
  id: string;
  /** ws://host:port of this gateway (operators' reference). */
  url: string;
  maxCalls: number;
  maxLoad: number;
  /**
   * The machine's CPU (busy share of all cores) that counts as a full gateway: GATEWAY_MAX_HOST_CPU.
   * Above 1 the machine's CPU never counts.
   */
  maxHostCpu?: number;
  calls: () => number;
  /** Of those, the calls still being set up (connected within SETUP_SECS, room-estimate.ts). */
  settingUp?: () => number;
  /** The longest a call waited for its workflow's first request since the last reading (handoff-lag.ts). */
  handoffLagMs?: () => number;
  /** GATEWAY_MAX_HANDOFF_MS: no new call while the hand-off lag is at least this (0: never). */
  maxHandoffMs?: number;
  log: Logger;
  /** What measures the load: the process's own meter unless a test drives it. */
  meter?: Pick<LoadMeter, 'read' | 'stop'>;
}

export interface PresenceSnapshot extends LoadReading {
  state: GatewayState;
  calls: number;
  /** The load admission decides on (smoothed over a few seconds). */
  smoothedLoad: number;
  /** The longest a call waited for its workflow's first request over the last interval (handoff-lag.ts). */
  handoffLagMs: number;
  admitting: boolean;
  /** Calls it can hold now, counting those it holds (room-estimate.ts); its calls when not admitting. */
  room: number;
}

export class GatewayPresence {
  private readonly meter: Pick<LoadMeter, 'read' | 'stop'>;
  private readonly estimate: RoomEstimate;
  private readonly startedAt = new Date();
  private timer: NodeJS.Timeout | null = null;
  private state: GatewayState = 'active';
  private smoothed = 0;
  private snapshotValue: PresenceSnapshot;
  private writing: Promise<void> = Promise.resolve();
  private failing = false;

  constructor(private readonly opts: PresenceOptions) {
    this.meter = opts.meter ?? new LoadMeter();
    this.estimate = new RoomEstimate(opts.maxCalls, opts.maxLoad);
    this.snapshotValue = { load: 0, utilisation: 0, loopLagP99Ms: 0, cpu: 0, hostCpu: 0, state: 'active', calls: 0, smoothedLoad: 0, handoffLagMs: 0, admitting: true, room: opts.maxCalls };
  }

  /** Writes the first row (best effort) and keeps it fresh. */
  async start(): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => void this.tick(), PRESENCE_INTERVAL_MS);
    this.timer.unref();
  }

  get snapshot(): PresenceSnapshot {
    return this.snapshotValue;
  }

  /** Draining or stopping: written at once, so the API stops sending calls here. */
  async setState(state: GatewayState): Promise<void> {
    this.state = state;
    await this.tick();
  }

  /**
   * Stops writing. `markStopped: false` leaves the row to go stale: the watchdog then judges the
   * gateway lost and its calls' workflows find out (for calls this gateway could not tell itself).
   */
  async stop(markStopped = true): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (markStopped) await this.setState('stopped');
    else await this.writing;
    this.meter.stop();
  }

  private tick(): Promise<void> {
    const reading = withHostCpu(this.meter.read(), this.opts.maxLoad, this.opts.maxHostCpu);
    this.smoothed = this.smoothed * (1 - LOAD_SMOOTHING) + reading.load * LOAD_SMOOTHING;
    const calls = this.opts.calls();
    const settingUp = this.opts.settingUp?.() ?? 0;
    const handoffLagMs = this.opts.handoffLagMs?.() ?? 0;
    this.estimate.observe(reading.load, calls, settingUp);
    // Judged on the load once the set-ups under way are over: a burst's set-ups pass, its calls stay.
    const settled = this.estimate.settledLoad(this.smoothed, settingUp);
    // The workflows falling behind is a full machine too, though this process's own figures say room.
    const maxHandoffMs = this.opts.maxHandoffMs ?? 0;
    const behind = maxHandoffMs > 0 && handoffLagMs >= maxHandoffMs;
    const admitting = this.state === 'active' && settled < this.opts.maxLoad && calls < this.opts.maxCalls && !behind;
    // The room is projected from the newer of the two figures: in a burst the raw reading leads.
    const room = admitting ? this.estimate.room(calls, Math.max(reading.load, this.smoothed), settingUp) : calls;
    this.snapshotValue = { ...reading, state: this.state, calls, smoothedLoad: this.smoothed, handoffLagMs, admitting, room };
    // One write at a time, in order: a slow database must not pile writes up.
    this.writing = this.writing.then(() => this.write(this.snapshotValue));
    return this.writing;
  }

  private async write(s: PresenceSnapshot): Promise<void> {
    try {
      await this.opts.pool.query(
        `INSERT INTO gateways (id, url, state, started_at, seen_at, calls, max_calls, load, loop_lag_ms, cpu, admitting, room, handoff_lag_ms, lost_at, lost_handled)
         VALUES ($1, $2, $3, $4, now(), $5, $6, $7, $8, $9, $10, $11, $12, NULL, false)
         ON CONFLICT (id) DO UPDATE SET url = $2, state = $3, seen_at = now(), calls = $5, max_calls = $6, load = $7,
           loop_lag_ms = $8, cpu = $9, admitting = $10, room = $11, handoff_lag_ms = $12, lost_at = NULL, lost_handled = false`,
        [this.opts.id, this.opts.url, s.state, this.startedAt, s.calls, this.opts.maxCalls, s.smoothedLoad, s.loopLagP99Ms, s.cpu, s.admitting, s.room, s.handoffLagMs],
      );
      if (this.failing) this.opts.log.info('gateway presence: writing again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.opts.log.warn('gateway presence: write failed; calls go on, retrying', { error: (err as Error).message });
      this.failing = true;
    }
  }
}
