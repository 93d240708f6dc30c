/**
 * bench:voice's check of one call (scripts/bench-voice.ts), from the platform's own records once
 * the workflow has written everything: did it complete with the expected transcript, no error
 * events, every barge-in cleared and no frame dropped; its `ttfb_metric` figures; and where its
 * turns' time went at the Temporal hand-off (turn-handoff.ts). A failed call also gets its last
 * events and the end of its workflow history, to see what the platform did (with BENCH_LOG_DIR,
 * the whole history in that folder).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Harness } from '../../test/support/harness';
import { callWorkflowId } from '../../workflows/call-definitions';
import { transcriptDifference, type CallFrames, type CallResult, type ScriptedTurn } from './bench-caller';
import { historyCost, historyJson, historyTail, noCost, type TemporalCost } from './temporal-cost';
import { setupSteps, type SetupSteps } from './setup-steps';
import { handoffSteps, type HandoffSteps } from './turn-handoff';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface CallCheck {
  ok: boolean;
  /** What was wrong, comma-separated. */
  why: string;
  /** A failed call's last events (types and the key fields). */
  tail: string;
  /** A failed call's last workflow history events (temporal-cost.ts historyTail). */
  workflowTail: string;
  /** The data of its `ttfb_metric` events. */
  metrics: any[];
  steps: HandoffSteps[];
  /** What the call cost Temporal (its workflow history). */
  cost: TemporalCost;
  /** Its set-up split at the Temporal hand-offs (null if the history lacks one). */
  setup: SetupSteps | null;
}

export interface ExpectedCall {
  greeting: string;
  callerText: string;
  script: ScriptedTurn[];
}

export async function checkCall(h: Harness, r: CallResult, frames: CallFrames, expected: ExpectedCall): Promise<CallCheck> {
  if (!r.callId) return { ok: false, why: r.error ?? 'no call', tail: '', workflowTail: '', metrics: [], steps: [], cost: noCost(), setup: null };
  let call: any;
  for (let attempt = 0; attempt < 100; attempt++) {
    call = (await h.request('GET', `/api/calls/${r.callId}`)).body;
    if (['completed', 'failed'].includes(call.status)) break;
    await sleep(100);
  }
  const events: any[] = (await h.request('GET', `/api/calls/${r.callId}/events`)).body;
  const transcript: Array<{ role: string; text: string }> = call.transcript ?? [];
  const problems: string[] = [];
  if (r.error) problems.push(r.error);
  if (call.status !== 'completed') problems.push(`status ${call.status}`);
  const difference = transcriptDifference(transcript, expected.greeting, expected.callerText, expected.script);
  if (difference) problems.push(difference);
  const unanswered = r.turns.filter((t) => t.kind === 'barge-in' && t.bargeInMs === null).length;
  if (unanswered) problems.push(`${unanswered} barge-in(s) without a clear`);
  const errors = events.filter((e) => e.event_type === 'error');
  if (errors.length) problems.push(`error events: ${errors.map((e) => e.data.message).join('; ')}`);
  if (frames.dropped) problems.push(`${frames.dropped} frames dropped`);
  const e2e = events
    .filter((e) => e.event_type === 'ttfb_metric' && e.data.processor === 'e2e')
    .map((e) => ({ firstAudioMs: Date.parse(`${e.timestamp}Z`), afterVadStopMs: Number(e.data.after_vad_stop_ms) }));
  const history = await h.temporal.workflow
    .getHandle(callWorkflowId(r.callId))
    .fetchHistory()
    .catch(() => null);
  const steps = history ? handoffSteps(history, e2e) : [];
  const cost = history ? historyCost(history) : noCost();
  const setup = history && r.connectedAtMs !== undefined ? setupSteps(history, r.connectedAtMs) : null;
  // For a failed call: its last events, to see what the platform did (types and the key fields).
  const tail = problems.length
    ? events
        .filter((e) => e.event_type !== 'ttfb_metric')
        .slice(-14)
        .map((e) => `${e.event_type}${e.data?.text ? `(${String(e.data.text).slice(0, 12)})` : e.data?.status ? `(${e.data.status})` : ''}`)
        .join(' ')
    : '';
  const workflowTail = problems.length ? (history ? historyTail(history) : 'no workflow history') : '';
  if (problems.length && history && process.env.BENCH_LOG_DIR) {
    fs.writeFileSync(path.join(process.env.BENCH_LOG_DIR, `history-${r.callId}.json`), historyJson(history));
  }
  return { ok: problems.length === 0, why: problems.join(', '), tail, workflowTail, metrics: events.filter((e) => e.event_type === 'ttfb_metric').map((e) => e.data), steps, cost, setup };
}
