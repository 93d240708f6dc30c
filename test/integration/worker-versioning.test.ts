/**
 * A deploy with Worker Versioning (docs/versioning.md): calls started on worker build A finish on
 * A after build B has become current, new calls run on B, and A's worker exits by itself once its
 * calls have ended. Both workers are `npm run worker` itself (src/worker/main.ts) in processes of
 * their own, on the same task queue; real API, PostgreSQL and Temporal dev server; the LLM is a fake.
 * Which worker ran what is read from the calls' histories: every workflow task completion carries
 * the deployment version of the worker that completed it.
 */
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { callWorkflowId } from '../../workflows/call-definitions';
import { createAgent, eventually } from '../support/fixtures';
import { h, hangUp, lastMessage, llm, say, startText, useTextCallStack } from '../support/text-call-stack';
import { exitOf, harnessEnv, killHard, spawnReady, type ProcessExit } from '../support/worker-process-control';

useTextCallStack({ worker: false });

const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) await killHard(child);
});

/** `npm run worker` with its own build id; ready once it polls (and, if it says so, is current). */
async function startWorkerBuild(buildId: string, env: Record<string, string> = {}) {
  const { child } = await spawnReady(
    path.join('..', '..', 'src', 'worker', 'main.ts'),
    {
      ...harnessEnv(h),
      OPENAI_BASE_URL: llm.url,
      BUILD_ID: buildId,
      WORKER_METRICS_PORT: '0',
      WORKER_DRAIN_CHECK_SECS: '1',
      ...env,
    },
    /Worker task queue/,
  );
  children.push(child);
  return { child, exited: exitOf(child) };
}

/** The build ids of the workers that completed the call's workflow tasks, in order. */
async function taskBuildIds(callId: string): Promise<Array<{ buildId: string; atMs: number }>> {
  const history = await h.temporal.workflow.getHandle(callWorkflowId(callId)).fetchHistory();
  return (history.events ?? [])
    .filter((e) => e.workflowTaskCompletedEventAttributes)
    .map((e) => ({
      buildId: e.workflowTaskCompletedEventAttributes!.deploymentVersion?.buildId ?? '(none)',
      atMs: Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6),
    }));
}

async function currentBuildId(): Promise<string | undefined> {
  const res = await h.temporal.workflowService.describeWorkerDeployment({ namespace: h.config.TEMPORAL_NAMESPACE, deploymentName: h.taskQueue });
  return res.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId ?? undefined;
}

it('calls of build A finish on A after B becomes current, new calls run on B, and A exits once its calls have ended', async () => {
  await createAgent(h.db, h.box, { name: 'versioned-desk', greeting: 'Hello, versioned desk.' });
  llm.setResponder((body) => ({ content: `You said: ${lastMessage(body).content}` }));

  // Build A: the first worker of the deployment makes itself current (WORKER_SET_CURRENT=auto).
  const a = await startWorkerBuild('build-a');
  expect(await currentBuildId()).toBe('build-a');
  const first = await startText('versioned-desk');
  const second = await startText('versioned-desk');
  expect(first.greeting).toBe('Hello, versioned desk.');
  expect((await say(first.call_id, 'one')).replies).toEqual(['You said: one']);
  expect((await say(second.call_id, 'two')).replies).toEqual(['You said: two']);

  // Build B, deployed as compose and the Helm chart do: it makes itself current when it polls.
  const b = await startWorkerBuild('build-b', { WORKER_SET_CURRENT: 'always' });
  const switchedAtMs = Date.now();
  expect(await currentBuildId()).toBe('build-b');

  // A new call runs on B; the calls of A go on, on A.
  const third = await startText('versioned-desk');
  expect((await say(third.call_id, 'three')).replies).toEqual(['You said: three']);
  expect((await say(first.call_id, 'one again')).replies).toEqual(['You said: one again']);
  expect((await hangUp(first.call_id)).status).toBe('completed');

  // A still has a call: it stays (the drain checks every second; give it several).
  const early = await Promise.race([a.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 4000))]);
  expect(early).toBeNull();
  expect((await say(second.call_id, 'two again')).replies).toEqual(['You said: two again']);
  expect((await hangUp(second.call_id)).status).toBe('completed');
  const endedAtMs = Date.now();

  // Its last call over, A's worker exits by itself, cleanly; B carries on.
  const exit: ProcessExit = await a.exited;
  expect(exit).toMatchObject({ code: 0, signal: null });
  expect(exit.atMs - endedAtMs).toBeLessThan(30_000);
  expect(b.child.exitCode).toBeNull();

  // The histories: A completed every task of the first two calls, also those after B became
  // current; B every task of the third.
  for (const call of [first, second]) {
    const tasks = await taskBuildIds(call.call_id);
    expect(new Set(tasks.map((t) => t.buildId))).toEqual(new Set(['build-a']));
    expect(tasks.some((t) => t.atMs > switchedAtMs)).toBe(true);
  }
  expect((await say(third.call_id, 'still here')).replies).toEqual(['You said: still here']);
  expect((await hangUp(third.call_id)).status).toBe('completed');
  const thirdTasks = await taskBuildIds(third.call_id);
  expect(thirdTasks.length).toBeGreaterThan(0);
  expect(new Set(thirdTasks.map((t) => t.buildId))).toEqual(new Set(['build-b']));

  // The server agrees: A is no longer in use, and nothing is pinned to it.
  const version = await h.temporal.workflowService.describeWorkerDeploymentVersion({
    namespace: h.config.TEMPORAL_NAMESPACE,
    deploymentVersion: { deploymentName: h.taskQueue, buildId: 'build-a' },
  });
  expect(['WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING', 'WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED', 4, 5]).toContain(version.workerDeploymentVersionInfo?.status);

  // A call started after A has gone runs on B as well.
  const fourth = await startText('versioned-desk');
  expect((await say(fourth.call_id, 'four')).replies).toEqual(['You said: four']);
  expect((await hangUp(fourth.call_id)).status).toBe('completed');
  await eventually(async () => (await taskBuildIds(fourth.call_id)).every((t) => t.buildId === 'build-b'));
}, 180_000);
