/**
 * A media gateway's drain (docs/call-lifecycle.md, "Draining"): told to stop, the gateway admits
 * no new call at once (its presence row says `draining`, so the API sends calls elsewhere, and its
 * WebSocket upgrades answer 503), lets the calls it holds go on until they end or the deadline
 * passes, then says goodbye to each call left and closes it (`drained`).
 *
 * The drain is over when every call the gateway held has its final record written, not when the
 * last stream closes: until then the call's workflow may still run activities here (taking an
 * armed turn back, receiving the media session's result), so the gateway's worker must stay.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from '../../shared/logger';
import { callWorkflowId, finalRecordUpdate } from '../../../workflows/call-definitions';
import { ENDING_MAX_MS } from '../call/goodbye';
import type { CallRegistry } from '../call/call-registry';
import type { GatewayPresence } from './presence';

/** How often the drain looks at its calls, and asks again about a final record it could not learn. */
const DRAIN_TICK_MS = 250;
/** Calls that ended shortly before the drain began may still be finishing in their workflows. */
const RECENTLY_ENDED_MS = 60_000;
/**
 * Once its calls have closed, the drain waits at most this long for their workflows to record the
 * end (they need Temporal; past this the process stops anyway, as it would for any outage).
 */
export const DRAIN_SETTLE_MS = 30_000;
/** The gateway's own stop after its drain: cut calls reporting (3 s), its worker stopping (3 s), margin. */
const STOP_MAX_SECS = 10;
/**
 * How long a drain may run past GATEWAY_DRAIN_SECS: the calls left finish their speech and hear the
 * goodbye, their workflows record the end, the gateway stops. An orchestrator's grace period (the
 * chart's terminationGracePeriodSeconds, Compose's stop_grace_period) must cover the drain plus this.
 */
export const DRAIN_OVERRUN_MAX_SECS = Math.ceil((ENDING_MAX_MS + DRAIN_SETTLE_MS) / 1000) + STOP_MAX_SECS;

export interface DrainOptions {
  calls: CallRegistry;
  presence: GatewayPresence | null;
  /** GATEWAY_DRAIN_SECS: how long live calls may go on. */
  deadlineSecs: number;
  /** GATEWAY_DRAIN_GOODBYE: what a call still live at the deadline hears. */
  goodbye: string;
  /** Resolves once the call's workflow has written its final record (or is gone); may reject. */
  finalRecorded(callId: string, cancel: AbortSignal): Promise<void>;
  log: Logger;
}

export class GatewayDrain {
  private running: Promise<void> | null = null;
  private readonly cut = new AbortController();

  constructor(private readonly opts: DrainOptions) {}

  get draining(): boolean {
    return this.running !== null;
  }

  /** Starts the drain (once); resolves when it is done or cut short. */
  run(): Promise<void> {
    return (this.running ??= this.drain());
  }

  /** Stops waiting (a second signal): whatever calls are left are cut by the gateway's stop. */
  cutShort(): void {
    this.cut.abort();
  }

  private async drain(): Promise<void> {
    const { calls, presence, deadlineSecs, goodbye, log } = this.opts;
    const signal = this.cut.signal;
    // Ends the waits for final records: when the drain is cut short or gives up on them.
    const following = new AbortController();
    signal.addEventListener('abort', () => following.abort(), { once: true });
    const deadline = performance.now() + deadlineSecs * 1000;
    const settled = new Map<string, Promise<void>>();
    const follow = (callId: string, closed: Promise<unknown> = Promise.resolve()) => {
      if (settled.has(callId)) return;
      settled.set(callId, closed.then(() => this.opts.finalRecorded(callId, following.signal)).catch(() => undefined));
    };
    for (const callId of calls.endedWithin(RECENTLY_ENDED_MS)) follow(callId);
    await presence?.setState('draining');
    log.info('draining: taking no new calls; live calls go on', { calls: calls.size, deadline_secs: deadlineSecs });
    let deadlinePassed = false;
    while (!signal.aborted) {
      for (const call of calls.all()) follow(call.callId, call.closed);
      if (calls.size === 0 && calls.startingCount === 0) break;
      if (performance.now() >= deadline) {
        if (!deadlinePassed) log.info('drain deadline passed: ending the calls left', { calls: calls.size });
        deadlinePassed = true;
        for (const call of calls.all()) void call.endForDrain(goodbye);
      }
      await sleep(DRAIN_TICK_MS, undefined, { signal }).catch(() => undefined);
    }
    const allRecorded = Promise.allSettled(settled.values()).then(() => true);
    const gaveUp = sleep(DRAIN_SETTLE_MS, false, { signal: following.signal }).catch(() => false);
    const recorded = await Promise.race([allRecorded, gaveUp]);
    following.abort();
    if (signal.aborted) return;
    if (recorded) log.info('drained: every call this gateway held has ended', { calls: settled.size });
    else log.warn('drain: some calls did not record their end in time; stopping anyway', { settle_ms: DRAIN_SETTLE_MS });
  }
}

/**
 * Resolves once the call's workflow has written its final record (status, end time: its provider
 * call is hung up by then) or is gone. The workflow may go on after (post-call analysis) without
 * this gateway. Retried while Temporal does not answer, until `cancel`.
 */
export async function waitForFinalRecord(temporal: Client, callId: string, cancel: AbortSignal): Promise<void> {
  const handle = temporal.workflow.getHandle(callWorkflowId(callId));
  while (!cancel.aborted) {
    try {
      await handle.executeUpdate(finalRecordUpdate);
      return;
    } catch {
      // A finished workflow takes no update: nothing left to wait for.
      const status = await handle.describe().then(
        (d) => d.status.name,
        (err: unknown) => (err instanceof WorkflowNotFoundError ? 'GONE' : null),
      );
      if (status !== null && status !== 'RUNNING') return;
      await sleep(DRAIN_TICK_MS * 4, undefined, { signal: cancel }).catch(() => undefined);
    }
  }
}
