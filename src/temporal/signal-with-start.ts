/**
 * Signals a workflow that may still be waiting out its start delay (an incoming call's, see
 * src/calls/call-service.ts): a signal-with-start runs it at once, where a plain signal would wait.
 * It never starts a workflow of its own: `args` are empty because the workflow exists already,
 * and one that has ended is refused (`REJECT_DUPLICATE`, WorkflowExecutionAlreadyStartedError).
 */
import type { Client } from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';

export interface WorkflowTarget {
  workflowType: string;
  workflowId: string;
  taskQueue: string;
}

export function signalWithStartExisting<A>(temporal: Client, target: WorkflowTarget, signal: SignalDefinition<[A]>, arg: A): Promise<unknown> {
  return temporal.workflow.signalWithStart(target.workflowType, {
    workflowId: target.workflowId,
    taskQueue: target.taskQueue,
    args: [],
    signal,
    signalArgs: [arg],
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
  });
}
