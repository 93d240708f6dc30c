/**
 * The gateway's presence row in PostgreSQL (table `gateways`, docs/call-lifecycle.md): rewritten
 * every PRESENCE_INTERVAL_MS with the gateway's state, calls and load. The API reads it to decide
 * whether a new call has a gateway with room (admission); the workers' watchdog reads it to tell a
 * dead gateway from a missing Temporal. The database clock (`now()`) stamps every write, so gateway
 * clocks never matter. A failed write is logged and retried at the next tick: calls go on.
 *
 * Each tick measures (the load meter, the calls, the hand-off lag), asks the admission rule
 * (admission-rule.ts, a pure function) and writes what it decided.
 */
import type { Pool } from 'pg';
import type { Logger } from '../../shared/logger';
import { decideAdmission, INITIAL_ADMISSION_MEMORY, type AdmissionLimits, type AdmissionMemory, type AdmissionRefusal, type GatewayState } from './admission-rule';
import { LoadMeter, type LoadReading } from './load-meter';

export type { GatewayState } from './admission-rule';

export const PRESENCE_INTERVAL_MS = 1000;

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
  /** GATEWAY_MIN_CALLS: below this many calls the machine's CPU never refuses (default 0). */
  minCalls?: number;
  /** GATEWAY_CGROUP_DIR: where the load meter reads its cgroup's cpu.max and cpu.stat (default the process's own cgroup). */
  cgroupDir?: string;
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
  /** Why it admits no new call (admission-rule.ts); null while admitting. */
  refusal: AdmissionRefusal | null;
  /** Calls it can hold now, counting those it holds (room-estimate.ts); its calls when not admitting. */
  room: number;
}

export class GatewayPresence {
  private readonly meter: Pick<LoadMeter, 'read' | 'stop'>;
  private readonly limits: AdmissionLimits;
  private readonly startedAt = new Date();
  private timer: NodeJS.Timeout | null = null;
  private state: GatewayState = 'active';
  private memory: AdmissionMemory = INITIAL_ADMISSION_MEMORY;
  private snapshotValue: PresenceSnapshot;
  private writing: Promise<void> = Promise.resolve();
  private failing = false;

  constructor(private readonly opts: PresenceOptions) {
    this.meter = opts.meter ?? new LoadMeter({ cgroupDir: opts.cgroupDir });
    this.limits = { maxCalls: opts.maxCalls, maxLoad: opts.maxLoad, maxHostCpu: opts.maxHostCpu, maxHandoffMs: opts.maxHandoffMs, minCalls: opts.minCalls };
    this.snapshotValue = { load: 0, utilisation: 0, loopLagP99Ms: 0, cpu: 0, hostCpu: 0, state: 'active', calls: 0, smoothedLoad: 0, handoffLagMs: 0, admitting: true, refusal: null, room: opts.maxCalls };
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
    // Measured:
    const reading = this.meter.read();
    const calls = this.opts.calls();
    const settingUp = this.opts.settingUp?.() ?? 0;
    const handoffLagMs = this.opts.handoffLagMs?.() ?? 0;
    // Decided:
    const decision = decideAdmission(this.memory, { state: this.state, reading, calls, settingUp, handoffLagMs }, this.limits);
    this.memory = decision.memory;
    const { admitting, refusal, room, load, smoothedLoad } = decision;
    this.snapshotValue = { ...reading, load, state: this.state, calls, smoothedLoad, handoffLagMs, admitting, refusal, room };
    // Written, one write at a time and in order: a slow database must not pile writes up.
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
