/**
 * Collects a call's events in workflow memory and writes them to PostgreSQL in batches, off the
 * turn's critical path: one activity per flush instead of one database round trip per event.
 * Writes go through a local activity: it runs on the call worker
 * inside the workflow task that records the events, so a flush costs no activity task, no extra
 * workflow task and three fewer history events (its retry policy, unlimited attempts with backoff,
 * is the same; a long PostgreSQL outage is retried on timers, as a regular activity would be).
 * Each event carries the sequence number the workflow assigned, so a retried or replayed write is
 * recognised and never duplicated. Events the agent subscribed to also go out as webhooks, each
 * delivered by its own child workflow (retries outlive the call).
 */
import { proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { CallEventRecord, CallRecordPatch, CallWorkflowInput } from './call-definitions';
import { startWebhookDelivery } from './webhook-notify';

// Persistence must not lose anything when PostgreSQL blips: retry without an attempt limit. A
// write PostgreSQL refuses (bad data, not an outage) the activity gives up on after a few attempts.
const { persistCall } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '15s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10s' },
});

/** Why a write was refused, without the data (it may hold what the caller said). */
const refusal = (err: unknown) => ((err as Error).cause as Error | undefined)?.message ?? (err as Error).message;

export class CallRecorder {
  private pending: CallEventRecord[] = [];
  /** Batches handed to an activity that has not confirmed the write yet. */
  private readonly inFlight = new Set<CallEventRecord[]>();
  private chain: Promise<void> = Promise.resolve();
  private readonly webhookStarts: Array<Promise<unknown>> = [];
  private readonly subscribed: Set<string>;
  /** Writes PostgreSQL refused, and their events (written again, with the essentials only, by settle()). */
  private refusedWrites = 0;
  private readonly refused: CallEventRecord[] = [];
  /** Told once per refused write (the call cannot go on unrecorded). */
  onRefused: (reason: string, refusedSeqs: number[]) => void = () => undefined;

  constructor(
    private readonly input: CallWorkflowInput,
    public nextSeq: number,
    /** Events a previous run (before continue-as-new) could not confirm as written. */
    carriedEvents: CallEventRecord[] = [],
  ) {
    this.subscribed = new Set(input.agent.webhook_url ? input.agent.webhook_events : []);
    this.pending.push(...carriedEvents);
  }

  /** Everything not yet confirmed in PostgreSQL (writes are idempotent, so repeating is safe). */
  unwritten(): CallEventRecord[] {
    return [...[...this.inFlight].flat(), ...this.pending].sort((a, b) => a.seq - b.seq);
  }

  /** While set (stampedAt), the time of events recorded without one. */
  private stamp: number | undefined;

  record(type: string, data: Record<string, unknown> = {}, timestampMs = this.stamp ?? Date.now()): CallEventRecord {
    const event = { seq: this.nextSeq++, type, timestampMs, data };
    this.pending.push(event);
    if (this.subscribed.has(type)) this.notify(event);
    return event;
  }

  /** Runs `work` with events recorded at `ms` (when it happened on the gateway) unless they name a time. */
  async stampedAt<T>(ms: number, work: () => Promise<T>): Promise<T> {
    this.stamp = ms;
    try {
      return await work();
    } finally {
      this.stamp = undefined;
    }
  }

  /** A record patch waiting for the next flush (see `defer`). */
  private deferred: CallRecordPatch = {};

  /**
   * Holds the pending events and `patch` for the next flush instead of writing them now. A local
   * activity keeps its workflow task open until it completes, and with it every command the task
   * gives: a write in the task that answers `mediaConnected` held the greeting's and the first
   * turn's activities back from the gateway (p50 361 ms, p95 803 ms in a 100-call burst).
   */
  defer(patch: CallRecordPatch): void {
    this.deferred = { ...this.deferred, ...patch };
  }

  /** Queues a write of the pending events (and the call-record patch) after earlier writes. */
  flush(ownPatch: CallRecordPatch = {}): Promise<void> {
    const patch = { ...this.deferred, ...ownPatch };
    this.deferred = {};
    const events = this.pending.splice(0);
    if (!events.length && !Object.keys(patch).length) return this.chain;
    const callId = this.input.callId;
    this.inFlight.add(events);
    this.chain = this.chain.then(async () => {
      try {
        await persistCall({ callId, events, patch });
      } catch (err) {
        // Never a rejected promise in workflow code: it would fail the workflow task in a loop.
        this.refusedWrites++;
        this.refused.push(...events);
        this.onRefused(refusal(err), events.map((e) => e.seq));
      }
      this.inFlight.delete(events);
    });
    return this.chain;
  }

  /**
   * The call's last write. If any write was refused, what can be kept still is: the refused and
   * pending events with only the essential record fields, else those fields alone.
   */
  async settle(essentials: CallRecordPatch): Promise<void> {
    await this.chain;
    if (!this.refusedWrites) return;
    const events = [...this.refused, ...this.pending.splice(0)].sort((a, b) => a.seq - b.seq);
    for (const attempt of [events, []]) {
      try {
        await persistCall({ callId: this.input.callId, events: attempt, patch: essentials });
        return;
      } catch {
        // try with less
      }
    }
  }

  /** Resolves when every queued write is done and every webhook delivery has started. */
  async drain(): Promise<void> {
    await this.chain;
    await Promise.all(this.webhookStarts);
  }

  private notify(event: CallEventRecord): void {
    const { callId, agent, phoneNumber, direction, options } = this.input;
    const start = startWebhookDelivery({ callId, agent, phoneNumber, direction, initialRetrySecs: options.webhookInitialRetrySecs }, event);
    this.webhookStarts.push(start.catch(() => undefined));
  }
}
