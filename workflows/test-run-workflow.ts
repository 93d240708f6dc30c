/**
 * A test run (docs/agent-tests.md): every test × repeat × agent version as a child attempt
 * workflow, at most `concurrency` at a time. Child ids are deterministic, so a run picked up by
 * another worker after a crash neither loses nor repeats a conversation. Workflow code.
 */
import { CancellationScope, executeChild, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { testAttemptWorkflow } from './test-attempt-workflow';
import { attemptWorkflowId, type TestAttemptInput, type TestRunInput } from './test-definitions';

const { finishTestRun } = proxyActivities<Activities>({ startToCloseTimeout: '1m', retry: { initialInterval: '1s', maximumAttempts: 20 } });

export async function testRunWorkflow(input: TestRunInput): Promise<void> {
  const [primary] = input.agents;
  const jobs: Array<{ workflowId: string; args: TestAttemptInput }> = [];
  for (let attempt = 1; attempt <= input.repeat; attempt++) {
    for (const test of input.tests) {
      for (const agent of input.agents) {
        const compare = agent === primary ? undefined : agent.version;
        jobs.push({
          workflowId: attemptWorkflowId(input.runId, test.id, attempt, compare),
          args: { runId: input.runId, test, agent, attempt, options: input.options, simulator: input.simulator },
        });
      }
    }
  }
  let next = 0;
  const lane = async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      // An attempt records its own failure; one that could not even do that fails the run's count, not the run.
      await executeChild(testAttemptWorkflow, { workflowId: job.workflowId, args: [job.args] }).catch((err) => {
        if (isCancellation(err)) throw err;
      });
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(input.concurrency, jobs.length)) }, lane));
  } catch (err) {
    if (!isCancellation(err)) throw err;
    await CancellationScope.nonCancellable(() => finishTestRun({ runId: input.runId, status: 'canceled' }));
    throw err;
  }
  await finishTestRun({ runId: input.runId, status: 'completed' });
}
