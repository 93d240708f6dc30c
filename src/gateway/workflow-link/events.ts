/**
 * Gateway events waiting to be reported to the call workflow. They ride along with the next
 * activity result or utterance signal (`drain`), so the workflow records them without an extra
 * round trip; timestamps are wall-clock epoch ms taken when the gateway observed the event.
 */
import type { GatewayEvent } from '../../../workflows/call-definitions';

/** Epoch milliseconds (sub-millisecond precision) of a performance.now() reading. */
export const epochMs = (perf = performance.now()): number => Math.round((performance.timeOrigin + perf) * 1000) / 1000;

// A call whose workflow stopped collecting (no activity running) must not grow without bound.
const MAX_PENDING_EVENTS = 1000;

export class GatewayEventLog {
  private pending: GatewayEvent[] = [];
  private dropped = 0;

  add(type: GatewayEvent['type'], data: Record<string, unknown>, atPerf = performance.now()): void {
    if (this.pending.length >= MAX_PENDING_EVENTS) {
      this.pending.shift();
      this.dropped++;
    }
    this.pending.push({ type, timestampMs: epochMs(atPerf), data });
  }

  error(message: string, context: string, extra: Record<string, unknown> = {}): void {
    this.add('error', { message, context, ...extra });
  }

  get size(): number {
    return this.pending.length;
  }

  /** Everything pending, oldest first; the log is empty afterwards. */
  drain(): GatewayEvent[] {
    const out = this.pending;
    this.pending = [];
    if (this.dropped > 0) {
      out.unshift({ type: 'error', timestampMs: epochMs(), data: { message: `${this.dropped} gateway events were dropped (not collected in time)`, context: 'gateway' } });
      this.dropped = 0;
    }
    return out;
  }
}
