/**
 * What the worker's workflow bundle is made of, for the worker, the tests' global set-up and the
 * replay test alike: one bundle whatever the configuration, so its hash (the build id,
 * docs/versioning.md) does not depend on whether tracing is on.
 */
import { bundleWorkflowCode, type BundleOptions } from '@temporalio/worker';
import { WORKFLOW_TRACING_MODULE } from '../observability/tracing/temporal-tracing';

export function workflowBundleOptions(): Pick<BundleOptions, 'workflowsPath' | 'workflowInterceptorModules'> {
  return {
    workflowsPath: require.resolve('../../workflows'),
    // A no-op for untraced workflows (workflows/tracing-interceptors.ts).
    workflowInterceptorModules: [WORKFLOW_TRACING_MODULE],
  };
}

export async function bundleWorkflows(logger: BundleOptions['logger']): Promise<string> {
  const { code } = await bundleWorkflowCode({ ...workflowBundleOptions(), ...(logger ? { logger } : {}) });
  return code;
}
