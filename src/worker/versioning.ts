/**
 * Worker Deployment Versioning (docs/versioning.md). A worker is one version of a deployment:
 * WORKER_DEPLOYMENT_NAME (default: its task queue) + a build id. Call and agent-test workflows are
 * pinned to the version they started on, so a change to them needs no `patched()`; a deploy makes
 * the new version current and the old one's workers run until their calls have ended (drain.ts).
 */
import crypto from 'node:crypto';
import type { WorkflowService } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Config } from '../config';
import type { Logger } from '../shared/logger';

// Read at run time: the image has package.json next to the compiled code (Dockerfile).
const PACKAGE_VERSION: string = require('../../package.json').version;

const VersionStatus = temporal.api.enums.v1.WorkerDeploymentVersionStatus;

/** How long a starting worker waits for the server to register its version before it gives up. */
const REGISTER_TIMEOUT_MS = 30_000;

export type SetCurrent = Config['WORKER_SET_CURRENT'];

export function deploymentName(config: Pick<Config, 'WORKER_DEPLOYMENT_NAME' | 'TEMPORAL_TASK_QUEUE'>): string {
  return config.WORKER_DEPLOYMENT_NAME ?? config.TEMPORAL_TASK_QUEUE;
}

/**
 * BUILD_ID when the build sets it (the image's git commit: Dockerfile); otherwise the package
 * version and a hash of the workflow bundle, so a build id changes exactly when the workflow code
 * does (a checkout with uncommitted changes included) and never names two different codes.
 */
export function buildIdOf(config: Pick<Config, 'BUILD_ID'>, workflowCode: string): string {
  if (config.BUILD_ID) return config.BUILD_ID;
  const hash = crypto.createHash('sha256').update(workflowCode).digest('hex').slice(0, 12);
  return `${PACKAGE_VERSION}-${hash}`;
}

/** `name:build`, as the TemporalWorkerDeploymentVersion search attribute spells a version. */
export function versionKey(version: WorkerDeploymentVersion): string {
  return `${version.deploymentName}:${version.buildId}`;
}

export type VersionState = 'current' | 'ramping' | 'draining' | 'drained' | 'inactive' | 'unknown';

/** The version's status as the server keeps it; `unknown` while it is not registered yet. */
export async function versionState(service: WorkflowService, namespace: string, version: WorkerDeploymentVersion): Promise<VersionState> {
  let info;
  try {
    info = (await service.describeWorkerDeploymentVersion({ namespace, deploymentVersion: version })).workerDeploymentVersionInfo;
  } catch (err) {
    if (isNotFound(err)) return 'unknown';
    throw err;
  }
  switch (info?.status) {
    case VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT:
      return 'current';
    case VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING:
      return 'ramping';
    case VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING:
      return 'draining';
    case VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED:
      return 'drained';
    case VersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE:
      return 'inactive';
    default:
      return 'unknown';
  }
}

/** The deployment's current version (null: none, new workflows go to unversioned workers). */
export async function currentVersion(service: WorkflowService, namespace: string, name: string): Promise<WorkerDeploymentVersion | null> {
  try {
    const res = await service.describeWorkerDeployment({ namespace, deploymentName: name });
    const current = res.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion;
    return current?.buildId ? { deploymentName: current.deploymentName ?? name, buildId: current.buildId } : null;
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

/**
 * Makes the worker's version current as `mode` says (`auto`: when the deployment has none). The
 * server knows a version once one of its workers has polled, so this waits for that first.
 */
export async function applySetCurrent(
  service: WorkflowService,
  namespace: string,
  version: WorkerDeploymentVersion,
  mode: SetCurrent,
  log: Logger,
): Promise<void> {
  if (mode === 'never') return;
  const current = await currentVersion(service, namespace, version.deploymentName);
  if (current?.buildId === version.buildId) return;
  if (mode === 'auto' && current) {
    log.info('another version is current; this worker runs the calls pinned to it or waits to be made current', { version: versionKey(version), current: versionKey(current) });
    return;
  }
  const deadline = Date.now() + REGISTER_TIMEOUT_MS;
  for (;;) {
    try {
      const deployment = await service.describeWorkerDeployment({ namespace, deploymentName: version.deploymentName });
      await service.setWorkerDeploymentCurrentVersion({
        namespace,
        deploymentName: version.deploymentName,
        buildId: version.buildId,
        conflictToken: deployment.conflictToken,
        identity: `worker ${process.pid}`,
      });
      log.info('this worker version is now current: new calls start on it', { version: versionKey(version), previous: current ? versionKey(current) : null });
      return;
    } catch (err) {
      // Not registered yet (the first poll is on its way), or another worker changed it meanwhile.
      if (Date.now() > deadline) throw new Error(`could not make worker version ${versionKey(version)} current: ${(err as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      if ((await currentVersion(service, namespace, version.deploymentName))?.buildId === version.buildId) return;
    }
  }
}

/** Workflows pinned to the version that have not closed (visibility: a second or so behind). */
export async function runningPinned(service: WorkflowService, namespace: string, version: WorkerDeploymentVersion): Promise<number> {
  const query = `TemporalWorkerDeploymentVersion = '${versionKey(version)}' AND TemporalWorkflowVersioningBehavior = 'Pinned' AND ExecutionStatus = 'Running'`;
  const res = await service.countWorkflowExecutions({ namespace, query });
  return Number(res.count ?? 0);
}

function isNotFound(err: unknown): boolean {
  // gRPC NOT_FOUND
  return (err as { code?: number }).code === 5;
}
