/**
 * Garbage-collection pauses of the benchmark's callers (their thread's clock): a pause stops
 * every simulated caller at once, so its frames look late and its barge-ins slow although the
 * platform was on time. Recorded so a run's late frames and barge-in maximum can be told apart
 * from the callers' own stalls.
 */
import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';
import { histogramDelta, type Scrape } from './prom-scrape';

/** A pause shorter than this cannot explain a late frame (a gap over 40 ms) or a slow barge-in. */
const STALL_MS = 10;

export interface GcPause {
  /** Date.now() at the pause's start. */
  atMs: number;
  ms: number;
  kind: 'minor' | 'major' | 'other';
}

const KINDS: Record<number, GcPause['kind']> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'other',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'other',
};

/** Recorded pauses, read back: which overlap a moment, and a one-line account. */
export interface PauseLog {
  within(fromMs: number, toMs: number): GcPause[];
  summary(): string;
}

/** Pauses of at least STALL_MS that overlap [fromMs, toMs]. */
export const overlapping = (pauses: GcPause[], fromMs: number, toMs: number) => pauses.filter((p) => p.ms >= STALL_MS && p.atMs + p.ms >= fromMs && p.atMs <= toMs);

/** Pauses recorded elsewhere (the callers' thread), with the summary it wrote. */
export function pauseLog(pauses: GcPause[], summary: string): PauseLog {
  return { within: (fromMs, toMs) => overlapping(pauses, fromMs, toMs), summary: () => summary };
}

export class GcPauses implements PauseLog {
  readonly pauses: GcPause[] = [];
  private readonly observer = new PerformanceObserver((list) => {
    const origin = performance.timeOrigin;
    for (const entry of list.getEntries()) this.pauses.push({ atMs: origin + entry.startTime, ms: entry.duration, kind: KINDS[kindOf(entry)] ?? 'other' });
  });

  start(): void {
    this.observer.observe({ entryTypes: ['gc'] });
  }

  stop(): void {
    this.observer.disconnect();
  }

  within(fromMs: number, toMs: number): GcPause[] {
    return overlapping(this.pauses, fromMs, toMs);
  }

  summary(): string {
    const total = this.pauses.reduce((n, p) => n + p.ms, 0);
    const longest = this.pauses.reduce((m, p) => Math.max(m, p.ms), 0);
    const major = this.pauses.filter((p) => p.kind === 'major').length;
    const { heapUsed, external } = process.memoryUsage();
    return `${this.pauses.length} pauses (${major} major), ${total.toFixed(0)} ms in all, longest ${longest.toFixed(0)} ms (heap ${(heapUsed / 1e6).toFixed(0)} MB, external ${(external / 1e6).toFixed(0)} MB)`;
  }
}

function kindOf(entry: PerformanceEntry): number {
  // Node ≥ 16 puts the kind in `detail` (the typings predate it).
  return (entry as unknown as { detail?: { kind?: number } }).detail?.kind ?? -1;
}

/** The gateway's collections during the run, from prom-client's `nodejs_gc_duration_seconds` (what the run added). */
export function gatewayGcSummary(before: Scrape, after: Scrape): string {
  let count = 0;
  let sumSecs = 0;
  let over10 = 0;
  let over100 = 0;
  for (const kind of ['minor', 'major', 'incremental', 'weakcb']) {
    const h = histogramDelta(before, after, 'nodejs_gc_duration_seconds', { kind });
    const upTo = (le: number) => h.buckets.find((b) => b.le === le)?.count ?? h.count;
    count += h.count;
    sumSecs += h.sum;
    over10 += h.count - upTo(0.01);
    over100 += h.count - upTo(0.1);
  }
  return `${count} pauses, ${(sumSecs * 1000).toFixed(0)} ms in all, ${over10} over 10 ms, ${over100} over 100 ms`;
}
