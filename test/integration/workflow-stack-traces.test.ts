/**
 * WORKFLOW_STACK_TRACES (patches/ adds the switch to the Temporal SDK): by default a worker's call
 * workflows run without the SDK's per-promise stack traces, and the Web UI's Stack Trace tab (the
 * `__stack_trace` query) says so; with `on` an operator sees where a live call waits. Through the
 * real API, Temporal server and a worker process.
 */
import { callWorkflowId } from '../../workflows/call-definitions';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { createAgent } from '../support/fixtures';
import { startHarness, type Harness } from '../support/harness';
import { exitOf, spawnWorkerProcess } from '../support/worker-process-control';

let h: Harness;
let llm: FakeOpenAI;

beforeAll(async () => {
  llm = await startFakeOpenAI();
  h = await startHarness({ env: { OPENAI_BASE_URL: llm.url } });
  await createAgent(h.db, h.box, { name: 'traced', greeting: 'Hello.' });
});
afterAll(async () => {
  await h?.stop();
  await llm?.stop();
});

/** A text call left waiting for the caller, and what the Stack Trace tab asks of it. */
async function stackTraceOfLiveCall(): Promise<{ trace?: string; error?: string }> {
  const started = await h.request('POST', '/api/calls/test', { body: { agent_name: 'traced' } });
  expect(started.status).toBe(201);
  const callId = started.body.call_id as string;
  try {
    const trace = await h.temporal.workflow.getHandle(callWorkflowId(callId)).query<string>('__stack_trace');
    return { trace };
  } catch (err) {
    return { error: (err as Error).message };
  } finally {
    const ended = await h.request('POST', '/api/calls/end', { body: { call_id: callId } });
    expect(ended.body).toMatchObject({ status: 'completed' });
  }
}

/** A worker in its own process, as `npm run worker` runs (the setting reaches its workflow threads by environment). */
async function withWorker<T>(env: Record<string, string>, run: () => Promise<T>): Promise<T> {
  const worker = await spawnWorkerProcess(h, env);
  try {
    return await run();
  } finally {
    const exited = exitOf(worker);
    worker.kill('SIGTERM');
    await exited;
  }
}

describe('workflow stack traces', () => {
  it('are off by default: the query says so, and the call works as ever', async () => {
    const { trace, error } = await withWorker({}, stackTraceOfLiveCall);
    expect(trace).toBeUndefined();
    expect(error).toMatch(/stack traces are not enabled on this worker/);
  });

  it('with WORKFLOW_STACK_TRACES=on, show where a live call waits (the turn loop, in the sources)', async () => {
    const { trace, error } = await withWorker({ WORKFLOW_STACK_TRACES: 'on' }, stackTraceOfLiveCall);
    expect(error).toBeUndefined();
    expect(trace).toMatch(/workflows\/turn-loop\.ts:\d+/);
  });
});
