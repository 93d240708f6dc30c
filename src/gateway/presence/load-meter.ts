/**
 * How busy this gateway is, measured over the last interval: event-loop utilisation (the share
 * of time the loop ran JavaScript), event-loop delay p99 (how late a timer fired — a gateway that
 * is descheduled or blocked paces audio late by that much), and process CPU. `load` folds them into
 * one figure, 0 (idle) to 1 (no room): the larger of the utilisation and the delay against its
 * budget. Audio frames are 20 ms apart; a loop late by LAG_BUDGET_MS is a gateway that can take no
 * more calls without callers hearing it.
 */
import { monitorEventLoopDelay, performance, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks';

/** Event-loop delay (p99) at which the gateway counts as full. */
export const LAG_BUDGET_MS = 50;

export interface LoadReading {
  /** 0…1+: max(utilisation, delay p99 / LAG_BUDGET_MS). */
  load: number;
  utilisation: number;
  loopLagP99Ms: number;
  /** Process CPU over the interval, in cores (1 = one core fully busy). */
  cpu: number;
}

export class LoadMeter {
  private elu: EventLoopUtilization = performance.eventLoopUtilization();
  private cpu = process.cpuUsage();
  private atMs = performance.now();
  private readonly delay: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private last: LoadReading = { load: 0, utilisation: 0, loopLagP99Ms: 0, cpu: 0 };

  constructor() {
    this.delay.enable();
  }

  /** The reading since the previous call (call it once per interval). */
  read(): LoadReading {
    const now = performance.now();
    const elu = performance.eventLoopUtilization(this.elu);
    const cpu = process.cpuUsage(this.cpu);
    const elapsedMs = Math.max(1, now - this.atMs);
    // The histogram's delay includes its own 10 ms sampling resolution: subtract it.
    const lagMs = Math.max(0, this.delay.percentile(99) / 1e6 - 10);
    this.elu = performance.eventLoopUtilization();
    this.cpu = process.cpuUsage();
    this.atMs = now;
    this.delay.reset();
    const utilisation = elu.utilization;
    this.last = {
      load: Math.max(utilisation, lagMs / LAG_BUDGET_MS),
      utilisation,
      loopLagP99Ms: lagMs,
      cpu: (cpu.user + cpu.system) / 1000 / elapsedMs,
    };
    return this.last;
  }

  get latest(): LoadReading {
    return this.last;
  }

  stop(): void {
    this.delay.disable();
  }
}
