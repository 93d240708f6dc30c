/**
 * The call workflow: one per call (workflow id `call-<call id>`), and the whole life of a call in
 * order — answer, media, greeting, the turn loop, the end, the analysis. Each step is one
 * collaborator, built here with what it needs:
 *
 *   call-context.ts   the call's state: status, conversation, totals, recorder, channel
 *   call-handlers.ts  signals, updates, queries (registered before the first await; state only)
 *   call-inbox.ts     the caller's turns, whichever way they reached the workflow
 *   call-media.ts     a voice call's stream on its media gateway: connect, hold, probe, close
 *   call-greeting.ts  greeting, pre-call tools, the flow's initial node
 *   turn-loop.ts      the one turn loop: utterances, idle timers, continue-as-new
 *   turn-arming.ts    the next turn armed on the gateway while the workflow waits (voice calls)
 *   agent-turns.ts    one turn of the agent: LLM rounds, tool calls, flow moves
 *   call-tools.ts     webhook tools, context tools, keypresses
 *   call-transfer.ts  transfer to a human (a tool call or pre-action, during a turn)
 *   call-warm-transfer.ts  a warm transfer: the caller on hold, the human briefed, then joined
 *   call-voicemail.ts who answered an outbound call; a vendor's machine verdict to the gateway
 *   post-call-analysis.ts  the analysis, after the call's final record
 *
 * Workflow code: deterministic, no I/O. Call workflows are pinned to their worker's deployment
 * version, so they change without patch markers (docs/conversation-engine.md).
 */
import { allHandlersFinished, ApplicationFailure, condition } from '@temporalio/workflow';
import type { CallWorkflowInput } from './call-definitions';
import { CallContext, type CallSummary } from './call-context';
import { registerHandlers } from './call-handlers';
import { CallInbox } from './call-inbox';
import { CallMedia } from './call-media';
import { Greeting } from './call-greeting';
import { TurnLoop } from './turn-loop';
import { TurnArming } from './turn-arming';
import { AgentTurns } from './agent-turns';
import { CallTools } from './call-tools';
import { Transfer } from './call-transfer';
import { isFinal } from './call-status';
import { hangUpProviderCall } from './provider-hangup';
import { plannedAnalysis, runPostCallAnalysis } from './post-call-analysis';

export type { CallSummary } from './call-context';

export async function callWorkflow(input: CallWorkflowInput): Promise<CallSummary> {
  // Only a gateway's signal-with-start can start one without input (a call whose workflow had
  // gone, src/gateway/workflow-link/workflow-reports.ts): there is no call to run.
  if (!input?.callId) throw ApplicationFailure.nonRetryable('a call workflow needs its input; this one was started by a signal alone');
  const ctx = new CallContext(input);
  const inbox = new CallInbox(ctx);
  const arming = ctx.isVoice ? new TurnArming(() => ctx.voice, (result, plan) => inbox.onArmedResult(result, plan)) : null;
  const media = new CallMedia(ctx, arming);
  const transfer = new Transfer(ctx, media, inbox);
  const tools = new CallTools(ctx);
  const agent = new AgentTurns(ctx, tools, transfer);
  const turns = new TurnLoop(ctx, inbox, agent, arming);
  const greeting = new Greeting(ctx, agent, tools, turns, arming);
  registerHandlers({ ctx, inbox, media, transfer, greeting });

  if (ctx.isVoice) void media.watch();
  // A machine the vendor's AMD found: the gateway stops the agent and hangs up or leaves the message.
  if (ctx.voicemail.detects) {
    void ctx.voicemail.handOverVendorMachine({
      connected: () => ctx.gatewayTaskQueue !== null,
      over: () => isFinal(ctx.status) || media.closed,
      channel: () => ctx.voice,
      lost: () => ctx.requestEnd('voicemail'),
    });
  }
  try {
    await converse();
  } catch (err) {
    ctx.failOn(err);
  }
  return finish();

  /** Answer, media, greeting, then the turns until the call is asked to end. */
  async function converse(): Promise<void> {
    ctx.describe();
    if (!input.carried && input.initialStatus === 'in_progress') ctx.recorder.record('call_started', {});
    if (input.carried) void ctx.recorder.flush(ctx.patch());
    if (!input.carried) await waitForAnswer();
    media.deferSetupWrites = media.greetedByGateway();
    // Make an answered (or unanswered) call visible at once, not only after the greeting (a call
    // its gateway greets is visible already: the gateway marked it at stream start).
    if (ctx.status !== input.initialStatus) media.setupWrite(ctx.patch());
    if (ctx.isVoice) await media.connect();
    if (ctx.status === 'in_progress' && !input.carried && ctx.endRequest === null) await greeting.begin();
    media.deferSetupWrites = false;
    await turns.run();
  }

  /** A ringing call: answered (the provider, the stream connecting), or `no_answer`. */
  async function waitForAnswer(): Promise<void> {
    if (ctx.status !== 'ringing') return;
    const settled = await condition(() => ctx.status !== 'ringing' || ctx.endRequest !== null, `${input.options.ringTimeoutSecs}s`);
    if (!settled) {
      ctx.recorder.record('call_status', { status: 'no_answer', source: 'ring_timeout' });
      ctx.moveTo('no_answer');
    } else if (ctx.status === 'ringing') {
      ctx.moveTo('no_answer'); // ended before anyone answered
    }
  }

  /** The end: late replies, the end reason, the line hung up, the final record, the analysis. */
  async function finish(): Promise<CallSummary> {
    await turns.settle();
    ctx.voicemail.settle(ctx.startTimeMs !== null);
    // A machine's line closing (the vendor's hang-up after our stream closed may overtake the
    // gateway's report) is still the voicemail ending the call.
    if (ctx.voicemail.answeredBy === 'machine' && (ctx.endRequest ?? 'user_ended') === 'user_ended') ctx.endRequest = 'voicemail';
    if (!isFinal(ctx.status)) ctx.moveTo('completed', ctx.endRequest ?? 'user_ended');
    await media.close();
    // A transferred call is the destination's now: hanging it up would cut the caller off.
    if (ctx.isVoice && !ctx.providerEnded && ctx.endReason !== 'transferred') await hangUpProviderCall(input.callId);
    const endMs = ctx.handedOverAtMs ?? Date.now();
    const duration = ctx.startTimeMs === null ? null : Math.max(0, (endMs - ctx.startTimeMs) / 1000);
    const { status, endReason: end_reason, totals, recorder } = ctx;
    recorder.record('call_ended', { status, end_reason, duration, transcript: ctx.transcript(), usage: totals, context: input.customParameters });
    const analysis = plannedAnalysis(input);
    const pending = analysis ? { analysis_status: 'pending' as const } : {};
    await recorder.flush({ ...ctx.patch(), status, end_time: endMs, duration, end_reason, ...pending });
    await recorder.settle({ status, end_time: endMs, duration, end_reason });
    ctx.finalRecorded = true;
    if (analysis) await runPostCallAnalysis(input, recorder, analysis);
    await recorder.drain();
    await condition(allHandlersFinished);
    return { status: ctx.status, end_reason: ctx.endReason, duration, totals };
  }
}
