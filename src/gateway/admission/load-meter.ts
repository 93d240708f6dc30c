/**
 * How busy this gateway is, measured over the last interval: event-loop utilisation (the share
 * of time the loop ran JavaScript), event-loop delay p99 (how late a timer fired — a gateway that
 * is descheduled or blocked paces audio late by that much), process CPU, and the whole machine's
 * CPU. `load` folds the gateway's own figures into one, 0 (idle) to 1 (no room): the larger of the
 * utilisation and the delay against its budget. Audio frames are 20 ms apart; a loop late by
 * LAG_BUDGET_MS is a gateway that can take no more calls without callers hearing it. The machine's
 * CPU is for the admission rule (admission-rule.ts, GATEWAY_MAX_HOST_CPU).
 */
import os from 'node:os';
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
  /** The machine's CPU over the interval: the busy share of all its cores, 0…1. */
  hostCpu: number;
}

interface CoreTimes {
  busy: number;
  total: number;
}

function hostTimes(): CoreTimes {
  let busy = 0;
  let total = 0;
  for (const { times } of os.cpus()) {
    const all = times.user + times.nice + times.sys + times.irq + times.idle;
    total += all;
    busy += all - times.idle;
  }
  return { busy, total };
}

export class LoadMeter {
  private elu: EventLoopUtilization = performance.eventLoopUtilization();
  private cpu = process.cpuUsage();
  private atMs = performance.now();
  private host = hostTimes();
  private readonly delay: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private last: LoadReading = { load: 0, utilisation: 0, loopLagP99Ms: 0, cpu: 0, hostCpu: 0 };

  constructor() {
    this.delay.enable();
  }

  /** The reading since the previous call (call it once per interval). */
  read(): LoadReading {
    const now = performance.now();
    const elu = performance.eventLoopUtilization(this.elu);
    const cpu = process.cpuUsage(this.cpu);
    const elapsedMs = Math.max(1, now - this.atMs);
    const host = hostTimes();
    const hostTotal = host.total - this.host.total;
    const hostCpu = hostTotal > 0 ? Math.min(1, Math.max(0, (host.busy - this.host.busy) / hostTotal)) : 0;
    this.host = host;
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
      hostCpu,
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

/**
 * The reading with the machine's CPU counted as load, scaled so that `maxHostCpu` busy reads as
 * `maxLoad`. On a machine the gateway shares with the worker and Temporal (the all-in-one install)
 * the gateway, at a higher priority, keeps its own loop on time while they starve: measured, a
 * 2-core machine ~90 % busy had every gateway figure read "room" while the calls' first turns
 * waited seconds for a workflow task. Above 1 either limit switches this off.
 */
export function withHostCpu(reading: LoadReading, maxLoad: number, maxHostCpu = Infinity): LoadReading {
  if (!(maxHostCpu <= 1) || maxLoad > 1) return reading;
  return { ...reading, load: Math.max(reading.load, (reading.hostCpu / maxHostCpu) * maxLoad) };
}
