/**
 * The CPU of the container the gateway runs in, from its cgroup (v2) files: `cpu.max` (the quota:
 * "max 100000" is none, "200000 100000" is two cores) and `cpu.stat` (`usage_usec`, and
 * `nr_periods`/`nr_throttled`: the quota periods the cgroup ran in and those it was stopped in for
 * having used its quota up). In a container with a CPU limit this is what says "full": the node's
 * cores are its neighbours' business, the quota is the gateway's (docs/call-lifecycle.md, "Load,
 * admission and refusal").
 *
 * The files are read from a directory, the process's own cgroup unless told another
 * (GATEWAY_CGROUP_DIR): tests give it a directory of files they write themselves. No directory, no
 * files (cgroup v1, macOS) or files it cannot parse: no reading, and admission goes without it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

export const CGROUP_ROOT = '/sys/fs/cgroup';

/** The cgroup's CPU over the last interval. */
export interface CgroupCpuReading {
  /** Cores the quota allows (cpu.max); null: no quota. */
  quotaCores: number | null;
  /** The cgroup's CPU use against its quota, 0…1+; null without a quota. */
  usage: number | null;
  /** Of the quota periods the cgroup ran in, the share it was throttled in (0…1). */
  throttled: number;
}

interface CpuStat {
  usageUsec: number;
  periods: number;
  throttled: number;
}

/** The process's own cgroup v2 directory ("0::/path" in /proc/self/cgroup), or the root. */
export function ownCgroupDir(procSelfCgroup = '/proc/self/cgroup'): string {
  try {
    const line = fs.readFileSync(procSelfCgroup, 'utf8').split('\n').find((l) => l.startsWith('0::'));
    return line ? path.resolve(CGROUP_ROOT, `.${line.slice(3).trim()}`) : CGROUP_ROOT;
  } catch {
    return CGROUP_ROOT;
  }
}

/** cpu.max → cores; null for "max", a missing file or one it cannot parse. */
export function parseCpuMax(text: string): number | null {
  const [quota, period] = text.trim().split(/\s+/);
  const q = Number(quota);
  const p = Number(period ?? 100_000);
  return quota !== 'max' && q > 0 && p > 0 ? q / p : null;
}

function parseCpuStat(text: string): CpuStat | null {
  const field = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  const usageUsec = field('usage_usec');
  if (!Number.isFinite(usageUsec)) return null;
  return { usageUsec, periods: field('nr_periods') || 0, throttled: field('nr_throttled') || 0 };
}

const readOrNull = (file: string) => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
};

export class CgroupCpu {
  private last: CpuStat | null;
  private atMs: number;

  /** `now`: milliseconds on a monotonic clock (a test may drive it). */
  constructor(
    readonly dir: string = ownCgroupDir(),
    private readonly now: () => number = () => performance.now(),
  ) {
    this.last = this.stat();
    this.atMs = this.now();
  }

  /** The reading since the previous call; null when the directory has no cgroup v2 CPU files. */
  read(): CgroupCpuReading | null {
    const stat = this.stat();
    const now = this.now();
    const previous = this.last;
    const elapsedUsec = Math.max(1, now - this.atMs) * 1000;
    this.last = stat;
    this.atMs = now;
    if (!stat || !previous) return null;
    const text = readOrNull(path.join(this.dir, 'cpu.max'));
    const quotaCores = text === null ? null : parseCpuMax(text);
    const used = Math.max(0, stat.usageUsec - previous.usageUsec);
    const periods = stat.periods - previous.periods;
    return {
      quotaCores,
      usage: quotaCores === null ? null : used / elapsedUsec / quotaCores,
      throttled: periods > 0 ? Math.min(1, Math.max(0, (stat.throttled - previous.throttled) / periods)) : 0,
    };
  }

  private stat(): CpuStat | null {
    const text = readOrNull(path.join(this.dir, 'cpu.stat'));
    return text === null ? null : parseCpuStat(text);
  }
}
