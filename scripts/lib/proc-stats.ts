/**
 * CPU time and resident memory of processes, sampled from /proc (Linux): /proc/<pid>/stat
 * (utime + stime, in clock ticks) and /proc/<pid>/status (VmRSS). Averages are taken between
 * two samples, so a window's CPU figure is exact up to one clock tick (10 ms) at each end.
 * (Not /proc/stat: it is sampled at the timer tick and misses event loops that wake for less.)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

let ticksPerSec: number | undefined;
function clockTicks(): number {
  if (ticksPerSec === undefined) {
    try {
      ticksPerSec = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSec = 100;
    }
  }
  return ticksPerSec;
}

export interface ProcSample {
  atMs: number;
  /** CPU seconds used so far (user + system). */
  cpuSecs: number;
  rssBytes: number;
}

export function readProc(pid: number): Omit<ProcSample, 'atMs'> {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after "(comm)": state is field 3, utime 14, stime 15.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(rest[11]) + Number(rest[12]);
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? 0);
  return { cpuSecs: ticks / clockTicks(), rssBytes: rssKb * 1024 };
}

/** CPU seconds so far of every process whose command name is `comm` (e.g. all PostgreSQL backends). */
function readGroup(comm: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== comm) continue;
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(entry), (Number(rest[11]) + Number(rest[12])) / clockTicks());
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

export class ProcMonitor {
  readonly samples = new Map<string, ProcSample[]>();
  readonly groupSamples = new Map<string, Array<{ atMs: number; cpu: Map<number, number> }>>();
  private timer: NodeJS.Timeout | undefined;

  /** `pids`: processes by name; `groups`: command names whose processes are summed (short-lived ones are missed). */
  constructor(
    private readonly pids: Record<string, number>,
    private readonly groups: string[] = [],
  ) {
    for (const name of Object.keys(pids)) this.samples.set(name, []);
    for (const comm of groups) this.groupSamples.set(comm, []);
  }

  sample(): void {
    const atMs = Date.now();
    for (const [name, pid] of Object.entries(this.pids)) {
      try {
        this.samples.get(name)!.push({ atMs, ...readProc(pid) });
      } catch {
        // the process has exited
      }
    }
    for (const comm of this.groups) this.groupSamples.get(comm)!.push({ atMs, cpu: readGroup(comm) });
  }

  /** Average CPU of a group of processes in [fromMs, toMs], in % of one core. */
  groupCpuPercent(comm: string, fromMs: number, toMs: number): number {
    const w = this.window(this.groupSamples.get(comm) ?? [], fromMs, toMs);
    if (w.length < 2) return NaN;
    const a = w[0]!;
    const b = w[w.length - 1]!;
    let secs = 0;
    for (const [pid, cpu] of b.cpu) if (a.cpu.has(pid)) secs += cpu - a.cpu.get(pid)!;
    return (secs / ((b.atMs - a.atMs) / 1000)) * 100;
  }

  start(intervalMs = 250): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.sample();
  }

  private window<T extends { atMs: number }>(list: T[], fromMs: number, toMs: number): T[] {
    return list.filter((s) => s.atMs >= fromMs && s.atMs <= toMs);
  }

  /** Average CPU of one process between the first and last sample in [fromMs, toMs], in % of one core. */
  cpuPercent(name: string, fromMs: number, toMs: number): number {
    const w = this.window(this.samples.get(name) ?? [], fromMs, toMs);
    if (w.length < 2) return NaN;
    const a = w[0]!;
    const b = w[w.length - 1]!;
    return ((b.cpuSecs - a.cpuSecs) / ((b.atMs - a.atMs) / 1000)) * 100;
  }

  /** Largest and mean resident memory of one process in [fromMs, toMs]. */
  rss(name: string, fromMs: number, toMs: number): { peakBytes: number; meanBytes: number } {
    const w = this.window(this.samples.get(name) ?? [], fromMs, toMs);
    if (!w.length) return { peakBytes: NaN, meanBytes: NaN };
    return { peakBytes: Math.max(...w.map((s) => s.rssBytes)), meanBytes: w.reduce((n, s) => n + s.rssBytes, 0) / w.length };
  }
}

/** Pids of the direct children of `parentPid` whose command line contains `match`. */
export function childPids(parentPid: number, match: string): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== parentPid) continue;
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(match)) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

export const cores = (): number => os.cpus().length;
export const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** Percent, as the benchmark prints it. */
export const pct = (v: number): string => `${v.toFixed(1)} %`;

/** The host's CPU counters (/proc/stat, all cores): busy and stolen ticks, and all of them. */
export interface HostTicks {
  busy: number;
  steal: number;
  total: number;
}

export function hostTicks(): HostTicks {
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq!;
  return { busy, steal: steal!, total: busy + idle! + iowait! + steal! };
}

/**
 * Between two readings, in % of one core: what the host's processes used, and what the hypervisor
 * gave to someone else while this VM wanted to run (steal) — a slow or shared host shows there.
 */
export function hostUse(from: HostTicks, to: HostTicks): { busyPercent: number; stealPercent: number } {
  const total = Math.max(1, to.total - from.total);
  return { busyPercent: (100 * cores() * (to.busy - from.busy)) / total, stealPercent: (100 * cores() * (to.steal - from.steal)) / total };
}
