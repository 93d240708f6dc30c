/**
 * The delays between reconnect attempts of a vendor connection (STT streams, TTS sockets): the
 * first retry at once, then backing off, and afresh once a connection proved healthy.
 */
// First retry at once (a dropped socket is usually just that), then backing off.
export const DEFAULT_RECONNECT_DELAYS_MS: readonly number[] = [0, 500, 1000, 2000, 5000];
// A connection that lived this long was healthy: the next drop starts the back-off afresh.
export const HEALTHY_CONNECTION_MS = 5000;

export class Backoff {
  private attempt = 0;
  private openedAt = 0;

  constructor(
    private readonly delaysMs: readonly number[] = DEFAULT_RECONNECT_DELAYS_MS,
    private readonly healthyMs = HEALTHY_CONNECTION_MS,
  ) {}

  /** Consecutive attempts since the last healthy connection. */
  get attempts(): number {
    return this.attempt;
  }

  opened(): void {
    this.openedAt = Date.now();
  }

  /** Called when a connection ended: a healthy one resets the back-off. */
  closed(): void {
    if (this.openedAt && Date.now() - this.openedAt >= this.healthyMs) this.attempt = 0;
    this.openedAt = 0;
  }

  /** The connection did useful work (e.g. a transcript arrived): it counts as healthy. */
  reset(): void {
    this.attempt = 0;
  }

  /** The delay before the next attempt; counts the attempt. */
  next(): number {
    const delay = this.delaysMs[Math.min(this.attempt, this.delaysMs.length - 1)]!;
    this.attempt++;
    return delay;
  }
}
