/**
 * One call's ordered outbox to its workflow (docs/call-lifecycle.md). Everything the gateway tells
 * the workflow — signals and the results of the activities it ran for the call, which are
 * completed asynchronously through here — is delivered in the order it was queued, one at a time,
 * and retried with backoff while Temporal cannot be reached. So a Temporal restart loses nothing,
 * and an activity's answer never overtakes what the gateway reported before it (the workflow that
 * wakes from an idle timer learns of the turns spoken meanwhile first).
 *
 * A delivery that cannot succeed is dropped, not retried for ever: the workflow or the activity is
 * gone (the call ended, was terminated or timed out), or Temporal refuses the request itself.
 */
import { ActivityNotFoundError, WorkflowNotFoundError } from '@temporalio/client';
import type { Logger } from '../../shared/logger';
import { isTemporalUnreachable } from '../../temporal/unreachable';

/** The head of the queue waiting longer than this means Temporal is not taking our reports. */
export const OUTBOX_STALL_MS = 1500;
const RETRY_INITIAL_MS = 100;
const RETRY_MAX_MS = 2000;
/** Attempts at a delivery Temporal refuses for a reason other than being unreachable. */
const REFUSED_ATTEMPTS = 5;
/** A call whose workflow stopped collecting must not grow without bound (a report is small). */
const MAX_QUEUED = 2000;

/**
 * Whether Temporal takes this gateway's reports, shared by all its calls' outboxes: a call whose
 * own queue is empty learns from the others that Temporal is away.
 */
export class TemporalReachability {
  private unreachableSincePerf: number | null = null;

  failed(): void {
    this.unreachableSincePerf ??= performance.now();
  }

  succeeded(): void {
    this.unreachableSincePerf = null;
  }

  get unreachable(): boolean {
    return this.unreachableSincePerf !== null;
  }
}

export interface OutboxOptions {
  callId: string;
  log: Logger;
  /** Shared by the gateway's outboxes (default: this outbox's own). */
  reachability?: TemporalReachability;
  /** A delivery found Temporal unreachable (called once per stall, when it begins). */
  stalled?(): void;
  /** The workflow is gone: nobody but the gateway will ever end the call's stream. */
  orphaned(): void;
}

/** A queued report; `ready` may be set until it is delivered (its content then waits for it). */
export interface OutboxItem {
  readonly what: string;
  readonly deliver: () => Promise<void>;
  /** The report's content is not known yet (a reply still playing): its place in the order is. */
  ready?: Promise<unknown>;
  delivered: boolean;
}

export class WorkflowOutbox {
  private readonly queue: OutboxItem[] = [];
  private pumping = false;
  private failedAttempts = 0;
  private lastFailureUnreachable = false;
  private drainedWaiters: Array<() => void> = [];
  private dropped = 0;
  /** When the head's first delivery attempt started (null while waiting for `ready`, or empty). */
  private attemptSincePerf: number | null = null;
  private readonly reachability: TemporalReachability;

  constructor(private readonly opts: OutboxOptions) {
    this.reachability = opts.reachability ?? new TemporalReachability();
  }

  /**
   * Queues a delivery behind everything queued before it. With `ready`, the delivery waits for it
   * (and holds the reports queued after it): its place in the order is now, its content later.
   */
  push(what: string, deliver: () => Promise<void>, ready?: Promise<unknown>): OutboxItem {
    if (this.queue.length >= MAX_QUEUED) {
      this.queue.splice(1, 1); // never the head: it may be half-delivered
      if (this.dropped++ === 0) this.opts.log.error('workflow outbox full: dropping the oldest reports', { callId: this.opts.callId });
    }
    const item: OutboxItem = { what, deliver, delivered: false, ...(ready ? { ready } : {}) };
    this.queue.push(item);
    if (!this.pumping) void this.pump();
    return item;
  }

  get size(): number {
    return this.queue.length;
  }

  /**
   * Temporal is not taking this call's reports: the head has waited over OUTBOX_STALL_MS, or the
   * last attempt found Temporal unreachable.
   */
  get stalled(): boolean {
    if (this.reachability.unreachable || this.lastFailureUnreachable) return true;
    return this.attemptSincePerf !== null && performance.now() - this.attemptSincePerf > OUTBOX_STALL_MS;
  }

  /** Milliseconds the head has been trying to reach Temporal (0 when it is not). */
  get stalledForMs(): number {
    return this.attemptSincePerf === null ? 0 : performance.now() - this.attemptSincePerf;
  }

  /** Resolves when everything queued so far (and after) has been delivered or dropped. */
  drained(): Promise<void> {
    if (!this.queue.length) return Promise.resolve();
    return new Promise((resolve) => this.drainedWaiters.push(resolve));
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    while (this.queue.length) {
      const head = this.queue[0]!;
      try {
        // Checked before every attempt: a report may learn it must wait while it is being retried.
        while (head.ready) {
          const ready = head.ready;
          await ready.catch(() => undefined);
          if (head.ready === ready) delete head.ready;
        }
        this.attemptSincePerf ??= performance.now();
        await head.deliver();
        this.delivered();
      } catch (err) {
        if (this.isGone(err, head)) {
          this.delivered();
          continue;
        }
        this.failedAttempts++;
        const wasUnreachable = this.lastFailureUnreachable;
        this.lastFailureUnreachable = isTemporalUnreachable(err);
        if (this.lastFailureUnreachable) this.reachability.failed();
        if (this.lastFailureUnreachable && !wasUnreachable) this.opts.stalled?.();
        if (!this.lastFailureUnreachable && this.failedAttempts >= REFUSED_ATTEMPTS) {
          this.opts.log.error('Temporal refused a report; dropped', { callId: this.opts.callId, what: head.what, error: (err as Error).message });
          this.delivered();
          continue;
        }
        if (this.failedAttempts === 1 || this.failedAttempts % 20 === 0) {
          this.opts.log.warn('cannot report to the call workflow yet; retrying', { callId: this.opts.callId, what: head.what, attempts: this.failedAttempts, error: (err as Error).message });
        }
        const delayMs = Math.min(RETRY_MAX_MS, RETRY_INITIAL_MS * 2 ** Math.min(this.failedAttempts - 1, 10));
        await new Promise((r) => setTimeout(r, delayMs));
      }
    }
    this.pumping = false;
    for (const resolve of this.drainedWaiters.splice(0)) resolve();
  }

  private delivered(): void {
    const head = this.queue.shift();
    if (head) head.delivered = true;
    this.attemptSincePerf = null;
    this.reachability.succeeded();
    if (this.failedAttempts > 0 && this.lastFailureUnreachable) this.opts.log.info('reporting to the call workflow again', { callId: this.opts.callId });
    this.failedAttempts = 0;
    this.lastFailureUnreachable = false;
  }

  /** Deliveries that can never succeed: the activity or the workflow no longer exists. */
  private isGone(err: unknown, head: OutboxItem): boolean {
    if (err instanceof ActivityNotFoundError) {
      this.opts.log.warn('the activity a report answers no longer exists; dropped', { callId: this.opts.callId, what: head.what });
      return true;
    }
    // Already started: a signal-with-start (mediaConnected) to a call workflow that has ended.
    const name = (err as Error)?.name;
    if (err instanceof WorkflowNotFoundError || name === 'WorkflowNotFoundError' || name === 'WorkflowExecutionAlreadyStartedError') {
      this.opts.log.error('the call workflow is gone; its stream is closed', { callId: this.opts.callId, what: head.what });
      this.opts.orphaned();
      return true;
    }
    return false;
  }
}
