/**
 * The worker's drain (docs/versioning.md, "Draining old workers"). Pinned calls can only run on
 * workers of their own version, so an old version's workers must stay until its calls have ended,
 * and should go then. Two questions, asked of Temporal:
 * - is this version still in use? Current or ramping: new calls start on it. The server marks a
 *   version DRAINING the moment another one takes its place (DRAINED minutes after its last
 *   workflow closed);
 * - does any workflow pinned to it still run? Visibility answers at once (the
 *   TemporalWorkerDeploymentVersion and TemporalWorkflowVersioningBehavior search attributes).
 * A version that is not in use and has had no running pinned workflow at two checks in a row (a
 * call whose first task was just completing shows up by the second) is drained.
 */
import type { WorkflowService } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { Logger } from '../shared/logger';
import { runningPinned, versionKey, versionState, type VersionState } from './versioning';

export interface DrainCheck {
  service: WorkflowService;
  namespace: string;
  version: WorkerDeploymentVersion;
  log: Logger;
}

const IN_USE: VersionState[] = ['current', 'ramping', 'unknown'];

/** A check that Temporal does not answer in this long counts as failed (an outage must not hang a stop). */
const CHECK_TIMEOUT_MS = 5000;

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer from Temporal in ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Whether this version still takes new calls; if not, how many pinned workflows still run on it. */
export async function drainState(check: DrainCheck): Promise<{ state: VersionState; inUse: boolean; running: number }> {
  const state = await withTimeout(versionState(check.service, check.namespace, check.version));
  if (IN_USE.includes(state)) return { state, inUse: true, running: 0 };
  return { state, inUse: false, running: await withTimeout(runningPinned(check.service, check.namespace, check.version)) };
}

/**
 * Resolves once the version is superseded (draining/drained: it was in use and another took over)
 * and no pinned workflow runs on it any more, checked every `intervalMs`. A version never made
 * current (`inactive`) keeps waiting: a deploy step may still make it current.
 */
export function whenSuperseded(check: DrainCheck & { intervalMs: number }): { done: Promise<void>; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  let emptyBefore = false;
  let reported = -1;
  const tick = async () => {
    if (stopped) return;
    try {
      const { state, running } = await drainState(check);
      const superseded = state === 'draining' || state === 'drained';
      if (superseded && running !== reported) {
        check.log.info('this worker version is no longer current; it runs until its pinned calls end', { version: versionKey(check.version), running });
        reported = running;
      }
      if (superseded && running === 0 && emptyBefore) {
        check.log.info('no call is pinned to this worker version any more: drained', { version: versionKey(check.version) });
        stopped = true;
        return resolveDone();
      }
      emptyBefore = superseded && running === 0;
    } catch (err) {
      // Temporal unreachable for a moment: the next check asks again; the worker keeps serving.
      check.log.warn('drain check failed', { error: (err as Error).message });
    }
    if (!stopped) timer = setTimeout(() => void tick(), check.intervalMs);
  };
  timer = setTimeout(() => void tick(), 0);
  return {
    done,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * On SIGTERM: a worker of a version still in use stops at once (its replicas, or its replacement
 * of the same build, carry on); one of an old version first waits, up to `maxMs`, for the pinned
 * workflows that only its version can run.
 */
export async function awaitPinnedCalls(check: DrainCheck & { intervalMs: number; maxMs: number }): Promise<void> {
  const deadline = Date.now() + check.maxMs;
  let emptyBefore = false;
  for (;;) {
    let inUse = true;
    let running = 0;
    try {
      ({ inUse, running } = await drainState(check));
    } catch (err) {
      check.log.warn('drain check failed; stopping', { error: (err as Error).message });
      return;
    }
    if (inUse) return;
    if (running === 0 && emptyBefore) return;
    emptyBefore = running === 0;
    if (Date.now() >= deadline) {
      check.log.warn('stopping with calls still pinned to this version: they wait for a worker of it', { version: versionKey(check.version), running });
      return;
    }
    if (running > 0) check.log.info('stopping once the calls pinned to this version end', { version: versionKey(check.version), running });
    await new Promise((resolve) => setTimeout(resolve, Math.min(check.intervalMs, Math.max(0, deadline - Date.now()))));
  }
}
