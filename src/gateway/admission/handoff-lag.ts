/**
 * How far behind this gateway's calls' workflows are: how long a call whose stream connected here
 * waits for its workflow's first request (the greeting). The gateway's own load cannot see it — on
 * the all-in-one install the gateway runs ahead of the worker and Temporal in CPU priority, so a
 * burst that the worker falls behind on reads as room while callers hear seconds of silence after
 * picking up and their first turns are not armed in time (docs/performance.md, "Admission on the
 * hand-off lag"). Admission closes while this lag is over GATEWAY_MAX_HANDOFF_MS.
 */

/**
 * A call still waiting counts only this long after its stream connected: a call whose workflow
 * never asks (one that failed to start) must not close the door for good.
 */
export const HANDOFF_WINDOW_MS = 30_000;

export class HandoffLag {
  private slowestHeardMs = 0;

  /** A call's workflow asked for the first time, `waitedMs` after the call's stream connected. */
  heard(waitedMs: number): void {
    this.slowestHeardMs = Math.max(this.slowestHeardMs, waitedMs);
  }

  /**
   * The lag over the interval since the last reading: the longest wait that ended in it, or the
   * longest still going (`waitingSince`: when each call still waiting connected, on `nowMs`'s
   * clock), whichever is longer.
   */
  read(nowMs: number, waitingSince: Iterable<number>): number {
    let lag = this.slowestHeardMs;
    this.slowestHeardMs = 0;
    for (const since of waitingSince) {
      const waited = nowMs - since;
      if (waited <= HANDOFF_WINDOW_MS) lag = Math.max(lag, waited);
    }
    return lag;
  }
}
