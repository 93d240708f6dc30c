/**
 * Splits a call's set-up — the caller's stream opening → the call's workflow first asking the
 * gateway anything (the gateway's `voice_workflow_first_request_seconds`) — at the Temporal
 * hand-offs, from the call workflow's history (server timestamps) and the caller's clock:
 *
 *   workflow started (the API, on the phone company's webhook) ─ its first task started
 *   stream opened ─ mediaConnected signal in the history ─ workflow task started ─ completed
 *              ─ first gateway activity scheduled ─ started by the gateway's worker
 *
 * All processes run on one machine, so server and caller timestamps share a clock.
 */
import { temporal } from '@temporalio/proto';
import { msOf } from './turn-handoff';

const T = temporal.api.enums.v1.EventType;

export interface SetupSteps {
  /**
   * Workflow started → its first workflow task started. An incoming call's workflow waits for its
   * stream (a start delay the gateway's signal-with-start ends), so this includes that wait.
   */
  firstTaskWaitMs: number;
  /** The stream opened → mediaConnected in the history (the gateway's look-up, its outbox, the RPC). */
  toSignalMs: number;
  /** mediaConnected → the workflow task that handles it started (the call worker). */
  toWorkflowTaskMs: number;
  /** That workflow task, start to completion (it decides: media session, greeting, first turn). */
  workflowTaskMs: number;
  /** Its first gateway activity scheduled → started by the gateway's worker. */
  toActivityStartMs: number;
  /** The stream opened → the first gateway activity started: the sum, as the gateway sees it. */
  totalMs: number;
}

/** Null when the history does not hold the whole set-up (a refused call, a call that failed first). */
export function setupSteps(history: temporal.api.history.v1.IHistory, streamOpenedMs: number): SetupSteps | null {
  const events = history.events ?? [];
  const started = events[0];
  const workflowQueue = started?.workflowExecutionStartedEventAttributes?.taskQueue?.name;
  const firstTask = events.find((e) => e.eventType === T.EVENT_TYPE_WORKFLOW_TASK_STARTED);
  const signalAt = events.findIndex((e) => e.eventType === T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED && e.workflowExecutionSignaledEventAttributes?.signalName === 'mediaConnected');
  if (!started || !firstTask || signalAt < 0) return null;
  const after = events.slice(signalAt);
  const taskStarted = after.find((e) => e.eventType === T.EVENT_TYPE_WORKFLOW_TASK_STARTED);
  const taskCompleted = after.find((e) => e.eventType === T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  const scheduled = after.find(
    (e) => e.eventType === T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && e.activityTaskScheduledEventAttributes?.taskQueue?.name !== workflowQueue,
  );
  const activityStarted =
    scheduled && events.find((e) => e.eventType === T.EVENT_TYPE_ACTIVITY_TASK_STARTED && Number(e.activityTaskStartedEventAttributes?.scheduledEventId) === Number(scheduled.eventId));
  if (!taskStarted || !taskCompleted || !scheduled || !activityStarted) return null;
  const signalMs = msOf(events[signalAt]!.eventTime);
  return {
    firstTaskWaitMs: msOf(firstTask.eventTime) - msOf(started.eventTime),
    toSignalMs: signalMs - streamOpenedMs,
    toWorkflowTaskMs: msOf(taskStarted.eventTime) - signalMs,
    workflowTaskMs: msOf(taskCompleted.eventTime) - msOf(taskStarted.eventTime),
    toActivityStartMs: msOf(activityStarted.eventTime) - msOf(scheduled.eventTime),
    totalMs: msOf(activityStarted.eventTime) - streamOpenedMs,
  };
}

/** The split as a table: p50 / p95 / max over the calls (`p` formats a percentile). */
export function printSetupSteps(all: SetupSteps[], p: (xs: number[], q: number) => string): void {
  if (!all.length) return;
  console.log(`\nCall set-ups (${all.length}): the caller's stream opened → the workflow's first request to the gateway, split at the Temporal hand-offs (workflow histories):\n`);
  console.log('| step | p50 | p95 | max |');
  console.log('|---|---|---|---|');
  for (const [k, label] of [
    ['firstTaskWaitMs', '(earlier) workflow started by the API → its first task started (an incoming call\'s waits for the stream)'],
    ['toSignalMs', 'stream opened → mediaConnected in the history (gateway look-up, outbox, signal-with-start RPC)'],
    ['toWorkflowTaskMs', 'mediaConnected → workflow task started on the call worker'],
    ['workflowTaskMs', 'workflow task (media session, greeting, first turn decided)'],
    ['toActivityStartMs', 'first gateway activity scheduled → started on the gateway'],
    ['totalMs', 'stream opened → first gateway activity started'],
  ] as const) {
    const xs = all.map((s) => s[k]);
    console.log(`| ${label} | ${p(xs, 50)} | ${p(xs, 95)} | ${p(xs, 100)} |`);
  }
}
