/**
 * Splits the gateway's "VAD stop → first audio" of each caller turn at the Temporal hand-off,
 * from the call workflow's history (server timestamps) and the call's `ttfb_metric` e2e events:
 *
 *   VAD stop ─ utterance signal recorded ─ workflow task started ─ completed (voiceTurn scheduled)
 *            ─ voiceTurn started on the gateway ─ first agent audio on the socket
 *
 * All processes run on one machine, so server and event timestamps share a clock.
 */
import { temporal } from '@temporalio/proto';

const T = temporal.api.enums.v1.EventType;

export interface HandoffSteps {
  /** VAD stop → the utterance signal is in the history (STT final + signal RPC). */
  toSignalMs: number;
  /** Signal → the worker starts the workflow task (task queue and worker poll). */
  toWorkflowTaskMs: number;
  /** The workflow task runs (replay-free activation, commands sent back). */
  workflowTaskMs: number;
  /** voiceTurn scheduled → started by the gateway's worker (its poll). */
  toActivityStartMs: number;
  /** voiceTurn started → first agent audio frame on the socket (LLM, TTS, pacing). */
  gatewayWorkMs: number;
}

type Ts = { seconds?: unknown; nanos?: number | null } | null | undefined;
/** A history event's time, epoch ms. */
export const msOf = (t: Ts): number => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;

/**
 * One entry per turn that got an e2e metric: `e2e` are the call's ttfb_metric e2e events in order
 * (`firstAudioMs` = the event's time, `afterVadStopMs` from its data).
 */
export function handoffSteps(history: temporal.api.history.v1.IHistory, e2e: Array<{ firstAudioMs: number; afterVadStopMs: number }>): HandoffSteps[] {
  const events = history.events ?? [];
  const out: HandoffSteps[] = [];
  // Turns are paired with the signals in order: a call whose turns were partly armed (no signal)
  // cannot be paired, and is left out rather than mismatched.
  const signals = events.filter((e) => e.eventType === T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED && e.workflowExecutionSignaledEventAttributes?.signalName === 'utterance');
  if (signals.length !== e2e.length) return out;
  let turn = 0;
  for (let i = 0; i < events.length && turn < e2e.length; i++) {
    const e = events[i]!;
    if (e.eventType !== T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED || e.workflowExecutionSignaledEventAttributes?.signalName !== 'utterance') continue;
    const signalMs = msOf(e.eventTime);
    const wfStarted = events.slice(i).find((x) => x.eventType === T.EVENT_TYPE_WORKFLOW_TASK_STARTED);
    const wfCompleted = events.slice(i).find((x) => x.eventType === T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
    const scheduled = events.slice(i).find((x) => x.eventType === T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && x.activityTaskScheduledEventAttributes?.activityType?.name === 'voiceTurn');
    const started = scheduled && events.find((x) => x.eventType === T.EVENT_TYPE_ACTIVITY_TASK_STARTED && Number(x.activityTaskStartedEventAttributes?.scheduledEventId) === Number(scheduled.eventId));
    const { firstAudioMs, afterVadStopMs } = e2e[turn++]!;
    if (!wfStarted || !wfCompleted || !scheduled || !started) continue;
    const vadStopMs = firstAudioMs - afterVadStopMs;
    out.push({
      toSignalMs: signalMs - vadStopMs,
      toWorkflowTaskMs: msOf(wfStarted.eventTime) - signalMs,
      workflowTaskMs: msOf(wfCompleted.eventTime) - msOf(wfStarted.eventTime),
      toActivityStartMs: msOf(started.eventTime) - msOf(scheduled.eventTime),
      gatewayWorkMs: firstAudioMs - msOf(started.eventTime),
    });
  }
  return out;
}

/** The bench's table of the Temporal hand-off steps of turns that went through the utterance signal. */
export function printHandoffSteps(steps: HandoffSteps[], p: (xs: number[], q: number) => string): void {
  const step = (k: keyof HandoffSteps) => steps.map((s) => s[k]);
  // Only a turn not armed in time goes through the utterance signal and a voiceTurn activity.
  if (steps.length === 0) {
    console.log(`\nNo call had all its turns go through the utterance signal (armed turns skip it): the Temporal hand-off is the gateway's own stage below.`);
  } else {
    console.log(`\nTurns of calls none of whose turns was armed (${steps.length}): the gateway's "VAD stop → first audio" split at the Temporal hand-off (workflow histories):\n`);
    console.log('| step | p50 | p95 |');
    console.log('|---|---|---|');
    for (const [k, label] of [
      ['toSignalMs', 'VAD stop → utterance signal in the history (STT final, signal RPC)'],
      ['toWorkflowTaskMs', 'signal → workflow task started on the call worker'],
      ['workflowTaskMs', 'workflow task (the worker decides: voiceTurn)'],
      ['toActivityStartMs', 'voiceTurn scheduled → started on the gateway'],
      ['gatewayWorkMs', 'voiceTurn started → first audio on the socket (LLM stream, TTS, first frame)'],
    ] as const) {
      console.log(`| ${label} | ${p(step(k), 50)} | ${p(step(k), 95)} |`);
    }
  }
}
