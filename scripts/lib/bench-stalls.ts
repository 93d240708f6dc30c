/**
 * The benchmark's report on stalls: garbage collections of the callers' thread and of the
 * gateway, the slowest barge-ins and the late frames — each marked when a pause of the callers'
 * own thread overlapped it, a collection or another stall of its loop (then the callers' clock
 * stalled, not the platform).
 */
import type { CallFrames, CallResult, Turn } from './bench-caller';
import type { PauseLog } from './gc-pauses';

export interface StallInputs {
  /** The callers' thread's collections. */
  gc: PauseLog;
  /** The callers' thread's other loop stalls (loop-stalls.ts). */
  stalls: PauseLog;
  /** gatewayGcSummary of the run, or null without the gateway's metrics. */
  gatewayGc: string | null;
  bargeInTurns: Turn[];
  frames: CallFrames[];
  results: CallResult[];
  /** Date.now() when the first call was placed. */
  startedMs: number;
  /** The gateway's presence (s:calls/room@load(lag ms,CPU cores)) within a second of the given seconds. */
  presenceAround?: (atSecs: number[]) => string;
}

/** Prints the lines; returns how many late frames a collection of the callers' thread overlapped, and how many only another stall of it. */
export function printStalls({ gc, stalls, gatewayGc, bargeInTurns, frames, results, startedMs, presenceAround }: StallInputs): { gc: number; stall: number } {
  const secs = (atMs: number) => ((atMs - startedMs) / 1000).toFixed(2);
  const ownPause = (fromMs: number, toMs: number) => {
    const p = gc.within(fromMs, toMs).sort((a, b) => b.ms - a.ms)[0];
    if (p) return ` (a ${p.ms.toFixed(0)} ms ${p.kind} GC pause of the callers' thread inside it)`;
    const s = stalls.within(fromMs, toMs).sort((a, b) => b.ms - a.ms)[0];
    return s ? ` (the callers' thread ${s.ms.toFixed(0)} ms late inside it, no collection)` : '';
  };
  console.log(`- garbage collection: the callers' thread ${gc.summary()}; the gateway ${gatewayGc ?? 'NA'}`);
  console.log(`- the callers' thread's other stalls (its loop late, no collection): ${stalls.summary()}`);
  const slowest = bargeInTurns.filter((t) => typeof t.bargeInMs === 'number').sort((a, b) => b.bargeInMs! - a.bargeInMs!).slice(0, 3);
  console.log(`- slowest barge-ins: ${slowest.map((t) => `${Math.round(t.bargeInMs!)} ms at ${secs(t.speechStartMs)} s${ownPause(t.speechStartMs, t.speechStartMs + t.bargeInMs!)}`).join('; ')}`);
  // Whether the gateway was busy then (its CPU, loop lag): the barge-ins of a run fall within seconds of each other.
  const around = presenceAround?.(slowest.map((t) => Math.round((t.speechStartMs - startedMs) / 1000)));
  if (around) console.log(`- the gateway's presence around them (s:calls/room@load(loop lag ms,CPU cores,hand-off lag)): ${around}`);
  const lateAt = frames.flatMap((f) => f.lateAt).sort((a, b) => a.atMs - b.atMs);
  if (lateAt.length) {
    // What else happened then: a call's stream connecting or closing.
    const marks = [
      ...results.flatMap((r) => (r.connectedAtMs ? [{ atMs: r.connectedAtMs, what: `call ${r.index} connected` }] : [])),
      ...results.flatMap((r) => (r.hungUpAtMs ? [{ atMs: r.hungUpAtMs, what: `call ${r.index} hung up` }] : [])),
    ];
    console.log(`- late frames, when (s since the first call) and what happened nearest:`);
    for (const l of lateAt.slice(0, 12)) {
      const near = marks.reduce((best, m) => (Math.abs(m.atMs - l.atMs) < Math.abs(best.atMs - l.atMs) ? m : best), marks[0]!);
      const delta = (l.atMs - near.atMs) / 1000;
      console.log(`  ${secs(l.atMs)} s: ${Math.round(l.gapMs)} ms gap, ${Math.abs(delta).toFixed(2)} s ${delta >= 0 ? 'after' : 'before'} ${near.what}${ownPause(l.atMs - l.gapMs, l.atMs)}`);
    }
  }
  const inGc = (l: (typeof lateAt)[number]) => gc.within(l.atMs - l.gapMs, l.atMs).length > 0;
  const gcCount = lateAt.filter(inGc).length;
  const stallCount = lateAt.filter((l) => !inGc(l) && stalls.within(l.atMs - l.gapMs, l.atMs).length > 0).length;
  return { gc: gcCount, stall: stallCount };
}
