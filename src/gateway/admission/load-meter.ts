/**
 * How busy this gateway is, measured over the last interval: event-loop utilisation (the share
 * of time the loop ran JavaScript), event-loop delay p99 (how late a timer fired — a gateway that
 * is descheduled or blocked paces audio late by that much), process CPU (all its threads: the VAD
 * thread too; `ownCpu`: as a share of the cores it may use, its cgroup's quota else the machine's),
 * its container's cgroup (cgroup-cpu.ts) and the whole machine's CPU less its background work
 * (background-cpu.ts). `load` folds the gateway's
 * own figures into one, 0 (idle) to 1 (no room): the larger of the utilisation and the delay
 * against its budget. Audio frames are 20 ms apart; a loop late by LAG_BUDGET_MS is a gateway that
 * can take no more calls without callers hearing it. The cgroup and the machine's CPU are for the
 * admission rule (admission-rule.ts: withCgroupCpu, withHostCpu). The process CPU is not in the
 * load: `npm start` runs the API and the worker in the same process, and in a container the
 * cgroup's usage already counts it against the quota.
 */
import os from 'node:os';
import { monitorEventLoopDelay, performance, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks';
import { BackgroundCpu } from './background-cpu';
import { CgroupCpu, type CgroupCpuReading } from './cgroup-cpu';

/** Event-loop delay (p99) at which the gateway counts as full. */
export const LAG_BUDGET_MS = 50;

/** Its cgroup's quota full (usage against the quota) or throttled in this share of periods counts as a full gateway. */
export const CGROUP_FULL_USAGE = 0.9;
export const CGROUP_FULL_THROTTLED = 0.1;

export interface LoadReading {
  /** 0…1+: max(utilisation, delay p99 / LAG_BUDGET_MS). */
  load: number;
  utilisation: number;
  loopLagP99Ms: number;
  /** Process CPU over the interval, in cores (1 = one core fully busy). */
  cpu: number;
  /** The same as a share of the cores the gateway may use (its cgroup's quota, else the machine's); absent from a scripted reading. */
  ownCpu?: number;
  /** Its cgroup's CPU (cgroup v2); null or absent: none to read. */
  cgroup?: CgroupCpuReading | null;
  /** The machine's CPU over the interval: the busy share of all its cores, 0…1, its background work (background-cpu.ts) left out. */
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
  private last: LoadReading = { load: 0, utilisation: 0, loopLagP99Ms: 0, cpu: 0, ownCpu: 0, cgroup: null, hostCpu: 0 };
  private readonly cgroupCpu: CgroupCpu;
  private readonly background: BackgroundCpu;

  /**
   * `cgroupDir`: where its cgroup's cpu.max and cpu.stat are (GATEWAY_CGROUP_DIR; default the
   * process's own cgroup); `procDir`: where the processes' stat files are (/proc; tests give one).
   */
  constructor(opts: { cgroupDir?: string; procDir?: string } = {}) {
    this.cgroupCpu = new CgroupCpu(opts.cgroupDir || undefined);
    this.background = new BackgroundCpu(opts.procDir);
    this.background.msSinceLast();
    this.delay.enable();
  }

  /** The reading since the previous call (call it once per interval). */
  read(): LoadReading {
    const now = performance.now();
    const elu = performance.eventLoopUtilization(this.elu);
    const cpu = process.cpuUsage(this.cpu);
    const elapsedMs = Math.max(1, now - this.atMs);
    const cgroup = this.cgroupCpu.read();
    const host = hostTimes();
    const hostTotal = host.total - this.host.total;
    // Inside a CPU quota the machine's CPU is not judged (admission-rule.ts): no /proc scan.
    const background = cgroup?.quotaCores != null ? 0 : this.background.msSinceLast();
    const hostCpu = hostTotal > 0 ? Math.min(1, Math.max(0, (host.busy - this.host.busy - background) / hostTotal)) : 0;
    this.host = host;
    // The histogram's delay includes its own 10 ms sampling resolution: subtract it.
    const lagMs = Math.max(0, this.delay.percentile(99) / 1e6 - 10);
    this.elu = performance.eventLoopUtilization();
    this.cpu = process.cpuUsage();
    this.atMs = now;
    this.delay.reset();
    const utilisation = elu.utilization;
    const cores = (cgroup?.quotaCores ?? os.availableParallelism()) || 1;
    const processCpu = (cpu.user + cpu.system) / 1000 / elapsedMs;
    const ownCpu = processCpu / cores;
    this.last = {
      load: Math.max(utilisation, lagMs / LAG_BUDGET_MS),
      utilisation,
      loopLagP99Ms: lagMs,
      cpu: processCpu,
      ownCpu,
      cgroup,
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
 * The reading with its container's cgroup counted as load: CGROUP_FULL_USAGE of the quota used, or
 * throttled in CGROUP_FULL_THROTTLED of the periods (a throttled gateway is a gap in every caller's
 * audio), reads as `maxLoad`. The cgroup holds the gateway and whatever shares its container, never
 * its neighbours on the node. Without a quota, or with maxLoad above 1, it does not count.
 */
export function withCgroupCpu(reading: LoadReading, maxLoad: number): LoadReading {
  const cg = reading.cgroup;
  if (!cg || cg.usage === null || maxLoad > 1) return reading;
  const fullness = Math.max(cg.usage / CGROUP_FULL_USAGE, cg.throttled / CGROUP_FULL_THROTTLED);
  return { ...reading, load: Math.max(reading.load, fullness * maxLoad) };
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
