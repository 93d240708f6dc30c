/**
 * The Temporal worker that runs call workflows and their activities (LLM turns, tool webhooks,
 * event persistence, outgoing webhooks), and the gateway watchdog (src/calls/gateway-watchdog.ts).
 */
import { Client } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities';
import { startGatewayWatchdog } from '../calls/gateway-watchdog';
import { ensureSearchAttributes } from '../temporal/search-attributes';

/** After the grace, how long cancelled activities get to end before the worker stops regardless. */
const SHUTDOWN_FORCE_MARGIN_SECS = 5;

export interface RunningWorker {
  worker: Worker;
  /** Polling its task queue. */
  isRunning(): boolean;
  /** Stops polling; activities in flight finish first (up to SHUTDOWN_GRACE_SECS). */
  stop(): Promise<void>;
}

export interface WorkerSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** Pre-bundled workflow code (tests bundle once); default: bundle ../../workflows at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

export async function startWorker(settings: WorkerSettings): Promise<RunningWorker> {
  const connection = await NativeConnection.connect({ address: settings.address });
  await ensureSearchAttributes(connection, settings.namespace, settings.deps.log);
  // Read by the workflow threads Worker.create starts (patches/: the SDK has no switch of its own).
  process.env.WORKFLOW_STACK_TRACES = settings.deps.config.WORKFLOW_STACK_TRACES;
  const worker = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    activities: createActivities(settings.deps),
    ...(settings.workflowBundle
      ? { workflowBundle: settings.workflowBundle }
      : { workflowsPath: require.resolve('../../workflows') }),
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
  const watchdog = startGatewayWatchdog({
    db: settings.deps.db,
    temporal: new Client({ connection, namespace: settings.namespace }),
    log: settings.deps.log,
    livenessSecs: settings.deps.config.GATEWAY_LIVENESS_SECS,
  });
  let stopping: Promise<void> | undefined;
  return {
    worker,
    isRunning: () => worker.getState() === 'RUNNING',
    stop: () =>
      (stopping ??= (async () => {
        await watchdog.stop();
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running.catch(() => undefined);
        await connection.close();
      })()),
  };
}
