/**
 * The Temporal worker that runs call workflows and their activities (LLM turns, tool webhooks,
 * event persistence, outgoing webhooks), and the gateway watchdog (src/calls/gateway-watchdog.ts).
 */
import fs from 'node:fs';
import { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities';
import { startGatewayWatchdog } from '../calls/gateway-watchdog';
import { activityTracingInterceptors, clientTracingInterceptors, workflowTracingSinks } from '../observability/tracing/temporal-tracing';
import { ensureSearchAttributes } from '../temporal/search-attributes';
import { awaitPinnedCalls, whenSuperseded } from './drain';
import { bundleWorkflows } from './workflow-bundle';
import { applySetCurrent, buildIdOf, deploymentName, versionKey, type SetCurrent } from './versioning';

/** After the grace, how long cancelled activities get to end before the worker stops regardless. */
const SHUTDOWN_FORCE_MARGIN_SECS = 5;

export interface RunningWorker {
  worker: Worker;
  /** Polling its task queue. */
  isRunning(): boolean;
  /** Its deployment version (docs/versioning.md). */
  version: WorkerDeploymentVersion;
  /**
   * Resolves when another version has become current and no call is pinned to this one any more
   * (checked every WORKER_DRAIN_CHECK_SECS; never when that is 0). A standalone worker exits then.
   */
  drained: Promise<void>;
  /**
   * Stops polling; activities in flight finish first (up to SHUTDOWN_GRACE_SECS). A worker of a
   * version no longer current first waits for the calls pinned to it (up to WORKER_DRAIN_SECS).
   */
  stop(): Promise<void>;
}

export interface WorkerSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** Pre-bundled workflow code (tests bundle once); default: bundle ../../workflows at start. */
  workflowBundle?: { codePath: string } | { code: string };
  /** Default WORKER_SET_CURRENT (`npm start` passes `always`: its one worker is the install). */
  setCurrent?: SetCurrent;
}

async function workflowCode(bundle: WorkerSettings['workflowBundle']): Promise<string> {
  if (bundle && 'code' in bundle) return bundle.code;
  if (bundle) return fs.readFileSync(bundle.codePath, 'utf8');
  // Bundled here rather than by Worker.create: the build id is a hash of this code.
  return bundleWorkflows(Runtime.instance().logger);
}

export async function startWorker(settings: WorkerSettings): Promise<RunningWorker> {
  const connection = await NativeConnection.connect({ address: settings.address });
  await ensureSearchAttributes(connection, settings.namespace, settings.deps.log);
  // Read by the workflow threads Worker.create starts (patches/: the SDK has no switch of its own).
  process.env.WORKFLOW_STACK_TRACES = settings.deps.config.WORKFLOW_STACK_TRACES;
  const { config, log } = settings.deps;
  const code = await workflowCode(settings.workflowBundle);
  const version: WorkerDeploymentVersion = { deploymentName: deploymentName(config), buildId: buildIdOf(config, code) };
  const worker = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    activities: createActivities(settings.deps),
    workflowBundle: { code },
    // Tracing (docs/tracing.md): spans for activities; workflow spans leave through the sink.
    interceptors: { activity: activityTracingInterceptors() },
    sinks: workflowTracingSinks(),
    // Calls (and agent tests) run start to end on the version they started on: a change to their
    // code needs no patch. Workflows that must move to new code say so (webhook delivery).
    workerDeploymentOptions: { useWorkerVersioning: true, version, defaultVersioningBehavior: 'PINNED' },
    // Calls are long-lived and mostly idle; keep their state cached so a turn needs no replay.
    maxCachedWorkflows: 1000,
    // Stopping (a deploy): activities in flight may finish; those still running after the grace
    // are cancelled and retried by another worker. One that ignores its cancellation is left
    // behind a few seconds later, so the process always ends.
    shutdownGraceTime: settings.deps.config.SHUTDOWN_GRACE_SECS * 1000,
    shutdownForceTime: (settings.deps.config.SHUTDOWN_GRACE_SECS + SHUTDOWN_FORCE_MARGIN_SECS) * 1000,
  });
  const running = worker.run();
  // Signals go through the worker's own native connection: no second connection per worker.
  const client = new Client({ connection, namespace: settings.namespace, interceptors: { workflow: clientTracingInterceptors() } });
  const check = { service: client.workflowService, namespace: settings.namespace, version, log };
  // An explicit WORKER_SET_CURRENT wins; under `auto` the caller may know better (`npm start`).
  const setCurrent = config.WORKER_SET_CURRENT === 'auto' ? (settings.setCurrent ?? 'auto') : config.WORKER_SET_CURRENT;
  try {
    // The server knows the version once the worker has polled: the first poll is under way.
    await applySetCurrent(client.workflowService, settings.namespace, version, setCurrent, log);
  } catch (err) {
    worker.shutdown();
    await running.catch(() => undefined);
    await connection.close();
    throw err;
  }
  log.info('worker polling', { task_queue: settings.taskQueue, version: versionKey(version) });
  const drainWatch = config.WORKER_DRAIN_CHECK_SECS > 0 ? whenSuperseded({ ...check, intervalMs: config.WORKER_DRAIN_CHECK_SECS * 1000 }) : undefined;
  const watchdog = startGatewayWatchdog({
    db: settings.deps.db,
    temporal: client,
    log: settings.deps.log,
    livenessSecs: settings.deps.config.GATEWAY_LIVENESS_SECS,
  });
  let stopping: Promise<void> | undefined;
  return {
    worker,
    version,
    drained: drainWatch?.done ?? new Promise<void>(() => undefined),
    isRunning: () => worker.getState() === 'RUNNING',
    stop: () =>
      (stopping ??= (async () => {
        drainWatch?.stop();
        if (worker.getState() === 'RUNNING' && config.WORKER_DRAIN_SECS > 0) {
          // Asked as often as the drain watch asks (every 10 s when that is off, as in the chart).
          const intervalMs = config.WORKER_DRAIN_CHECK_SECS > 0 ? Math.max(1000, config.WORKER_DRAIN_CHECK_SECS * 1000) : 10_000;
          await awaitPinnedCalls({ ...check, intervalMs, maxMs: config.WORKER_DRAIN_SECS * 1000 });
        }
        await watchdog.stop();
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running.catch(() => undefined);
        await connection.close();
      })()),
  };
}
