/**
 * The calls whose audio this gateway instance holds, by call id, plus a short memory of the ones
 * that ended: a stream that reconnects for a finished call is refused, and a `mediaSession`
 * that starts after its stream already closed still learns how it ended.
 */
import type { CallMedia } from './call-media';
import type { MediaClosure } from './call-media-options';
import { HandoffLag } from '../admission/handoff-lag';
import type { WorkflowReports } from '../workflow-link/workflow-reports';

const RECENT_LIMIT = 1000;
const RECENT_TTL_MS = 10 * 60_000;

export class CallRegistry {
  private readonly active = new Map<string, CallMedia>();
  /** Ids with a stream being set up (token checked, workflow being asked). */
  private readonly starting = new Set<string>();
  /** Telephony provider of each starting or active call (metrics). */
  private readonly providers = new Map<string, string>();
  private readonly recent = new Map<string, { closure: MediaClosure; reports: WorkflowReports; atMs: number }>();
  /** Streams per call id, for calls re-attached after a transfer. */
  private readonly reattached = new Map<string, number>();
  private readonly handoff = new HandoffLag();

  get size(): number {
    return this.active.size;
  }

  /** Streams being set up (token checked, workflow being asked): calls about to be live here. */
  get startingCount(): number {
    return this.starting.size;
  }

  /** Live calls whose streams connected within the last `withinMs`: their set-up is still under way. */
  connectedWithin(withinMs: number): number {
    const since = performance.now() - withinMs;
    let n = 0;
    for (const call of this.active.values()) if (call.startPerf >= since) n++;
    return n;
  }

  /**
   * The call's workflow asked it something: the first time, how long after its stream connected
   * (else null). That wait is the hand-off lag admission watches (admission/handoff-lag.ts).
   */
  heardFromWorkflow(call: CallMedia): number | null {
    if (call.heardFromWorkflow) return null;
    call.heardFromWorkflow = true;
    const waitedMs = performance.now() - call.startPerf;
    this.handoff.heard(waitedMs);
    return waitedMs;
  }

  /** The longest a call waited, or still waits, for its workflow's first request since the last reading. */
  readHandoffLagMs(): number {
    const waiting: number[] = [];
    for (const call of this.active.values()) if (!call.heardFromWorkflow) waiting.push(call.startPerf);
    return this.handoff.read(performance.now(), waiting);
  }

  get(callId: string): CallMedia | undefined {
    return this.active.get(callId);
  }

  all(): CallMedia[] {
    return [...this.active.values()];
  }

  /**
   * Reserves a call id for a stream being set up: false if it is live or starting here; for a call
   * whose stream ended here, `reattach` (the stream is accepted only if the workflow awaits one:
   * a transfer handed the call away and the vendor brought it back) unless `allowReattach` is off.
   */
  reserve(callId: string, provider = 'unknown', allowReattach = false): boolean | 'reattach' {
    if (this.active.has(callId) || this.starting.has(callId)) return false;
    const finished = this.finished(callId);
    if (finished && !allowReattach) return false;
    this.starting.add(callId);
    this.providers.set(callId, provider);
    if (finished) this.reattached.set(callId, (this.reattached.get(callId) ?? 1) + 1);
    return finished ? 'reattach' : true;
  }

  /** How many streams this call has had here (2 and up: re-attached after transfers). */
  streamNumber(callId: string): number {
    return this.reattached.get(callId) ?? 1;
  }

  release(callId: string): void {
    this.starting.delete(callId);
    if (!this.active.has(callId)) this.providers.delete(callId);
  }

  /** Calls starting and live here, by telephony provider (the `voice_gateway_calls` gauge). */
  counts(): Array<{ provider: string; status: 'starting' | 'live'; count: number }> {
    const counts = new Map<string, { provider: string; status: 'starting' | 'live'; count: number }>();
    const add = (callId: string, status: 'starting' | 'live') => {
      const provider = this.providers.get(callId) ?? 'unknown';
      const key = `${provider}\n${status}`;
      const entry = counts.get(key) ?? { provider, status, count: 0 };
      entry.count++;
      counts.set(key, entry);
    };
    for (const id of this.starting) add(id, 'starting');
    for (const id of this.active.keys()) add(id, 'live');
    return [...counts.values()];
  }

  add(call: CallMedia): void {
    this.starting.delete(call.callId);
    this.recent.delete(call.callId);
    this.active.set(call.callId, call);
    void call.closed.then((closure) => {
      if (this.active.get(call.callId) === call) {
        this.active.delete(call.callId);
        this.providers.delete(call.callId);
      }
      this.recent.set(call.callId, { closure, reports: call.reports, atMs: Date.now() });
      this.prune();
    });
  }

  /** How a call that was on this gateway ended (for a mediaSession that arrives late). */
  finished(callId: string): MediaClosure | undefined {
    const entry = this.recent.get(callId);
    if (!entry) return undefined;
    if (Date.now() - entry.atMs > RECENT_TTL_MS) {
      this.recent.delete(callId);
      return undefined;
    }
    return entry.closure;
  }

  /** Calls whose streams ended here within the last `withinMs` (their workflows may still be ending). */
  endedWithin(withinMs: number): string[] {
    const since = Date.now() - withinMs;
    return [...this.recent].filter(([, entry]) => entry.atMs >= since).map(([id]) => id);
  }

  /** The call's reports (its outbox), live or recently finished: activity results queue there. */
  reportsOf(callId: string): WorkflowReports | undefined {
    return this.active.get(callId)?.reports ?? (this.finished(callId) ? this.recent.get(callId)?.reports : undefined);
  }

  private prune(): void {
    const cutoff = Date.now() - RECENT_TTL_MS;
    for (const [id, entry] of this.recent) {
      if (this.recent.size <= RECENT_LIMIT && entry.atMs >= cutoff) break;
      this.recent.delete(id);
      this.reattached.delete(id);
    }
  }
}
