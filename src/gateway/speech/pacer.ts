/**
 * One timer for the whole gateway that drives every call's outgoing audio. Each tick calls
 * `pace(now)` on the calls that have audio to send; a call decides itself how many frames are
 * due (playback.ts keeps the provider's buffer ~60 ms ahead, against absolute time, so a late
 * tick is made up on the next one). Ticks are re-armed against absolute targets: the timer does
 * not drift, and a stalled event loop skips ticks instead of bunching them.
 */
import { FRAME_MS } from '../../audio/pcm';

export interface Paced {
  /** Sends what is due at `nowPerf` (performance.now()); returns false once it has nothing left. */
  pace(nowPerf: number): boolean;
}

export class Pacer {
  private readonly members = new Set<Paced>();
  private timer: NodeJS.Timeout | undefined;
  private origin = 0;
  private ticks = 0;

  constructor(private readonly intervalMs = FRAME_MS / 2) {}

  get size(): number {
    return this.members.size;
  }

  /** Starts pacing a member (no-op if it already is); it leaves when `pace` returns false. */
  add(member: Paced): void {
    if (this.members.has(member)) return;
    this.members.add(member);
    if (!this.timer) {
      this.origin = performance.now();
      this.ticks = 0;
      this.schedule();
    }
  }

  remove(member: Paced): void {
    this.members.delete(member);
    if (this.members.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private schedule(): void {
    this.ticks++;
    const now = performance.now();
    let target = this.origin + this.ticks * this.intervalMs;
    if (now - target > this.intervalMs) {
      this.ticks = Math.ceil((now - this.origin) / this.intervalMs);
      target = this.origin + this.ticks * this.intervalMs;
    }
    this.timer = setTimeout(this.run, Math.max(0, target - now));
  }

  private readonly run = (): void => {
    const now = performance.now();
    for (const member of this.members) {
      let more = false;
      try {
        more = member.pace(now);
      } catch {
        // A failing call must not stop the others' audio; it is dropped from pacing.
      }
      if (!more) this.members.delete(member);
    }
    if (this.members.size) this.schedule();
    else this.timer = undefined;
  };
}

/** The gateway's pacer: one timer for every call in the process. */
export const sharedPacer = new Pacer();
