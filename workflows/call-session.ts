/**
 * One call's life: answer, media, greeting and pre-call tools, the turn loop (armed turns on voice
 * calls, see turn-arming.ts), idle timers, continue-as-new, the end. Message handlers only change
 * state (call-state.ts); this loop owns timers and activities. Workflow code: deterministic, no I/O.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  ContinueAsNew,
  isCancellation,
  proxyLocalActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { substitute } from '../src/shared/template';
import type { CallWorkflowInput, RunTurn } from './call-definitions';
import { GatewayLost, LlmUnavailable, SpeechUnavailable, VoiceChannel } from './channels';
import { isFinal } from './call-status';
import { hangUpProviderCall } from './provider-hangup';
import { initialNode, trimHistory } from './conversation';
import { isBackchannel, turnPolicyOf } from '../src/shared/turn-policy';
import { CallMediaSession } from './call-media-session';
import { runLimits } from './turn-arming';
import { plannedAnalysis, runPostCallAnalysis } from './post-call-analysis';
import type { CallSummary } from './call-state';
import { CLIENT_MANAGED_SAFETY_LIMIT_SECS, HISTORY_KEPT_ON_CONTINUE, IDLE_PROMPT } from './call-limits';
import type { Utterance } from './utterance';

export type { CallSummary } from './call-state';

const { readRunJournal } = proxyLocalActivities<Activities>({ startToCloseTimeout: '10s', retry: { initialInterval: '500ms', maximumAttempts: 5 } });

export class CallSession extends CallMediaSession {
  /** The call's final state is in PostgreSQL (what POST /api/calls/end waits for; the analysis comes after). */
  finalRecorded = false;

  // ---- main loop -----------------------------------------------------------------------------

  async run(): Promise<CallSummary> {
    if (this.presenceLiveness) void this.watchGateway();
    if (this.voicemail.detects) {
      void this.voicemail.handOverVendorMachine({
        connected: () => this.gatewayTaskQueue !== null,
        over: () => isFinal(this.status) || this.mediaClosed,
        channel: () => (this.channel instanceof VoiceChannel ? this.channel : null),
        lost: () => this.requestEnd('voicemail'),
      });
    }
    try {
      await this.converse();
    } catch (err) {
      this.failOn(err);
    }
    return this.finish();
  }

  private async converse(): Promise<void> {
    this.describe();
    if (!this.input.carried && this.input.initialStatus === 'in_progress') this.recorder.record('call_started', {});
    if (this.input.carried) void this.recorder.flush(this.patch());
    if (!this.input.carried) await this.waitForAnswer();
    this.deferSetupWrites = this.greetedByGateway();
    // Make an answered (or unanswered) call visible at once, not only after the greeting (a call
    // its gateway greets is visible already: the gateway marked it at stream start).
    if (this.status !== this.input.initialStatus) this.setupWrite(this.patch());
    if (this.input.channel === 'voice') await this.connectMedia();
    if (this.status === 'in_progress' && !this.input.carried && this.endRequest === null) await this.begin();
    this.deferSetupWrites = false;
    if (this.arming) return this.converseArmed();
    while (this.status === 'in_progress' && this.endRequest === null) {
      if (this.shouldContinueAsNew()) await this.continueAsNew();
      if (this.endRequest !== null || this.status !== 'in_progress') break;
      const woke = await condition(
        () => this.queue.length > 0 || this.endRequest !== null || this.status !== 'in_progress',
        this.msUntilIdleDeadline(),
      );
      if (!woke) await this.onIdle();
      else if (this.queue.length) await this.onUtterance(this.queue.shift()!);
    }
  }

  /** The turn loop with the next turn armed on the gateway while the workflow waits. */
  private async converseArmed(): Promise<void> {
    const arming = this.arming!;
    while (this.status === 'in_progress' && this.endRequest === null) {
      if (this.shouldContinueAsNew()) {
        await arming.disarm();
        await this.continueAsNew();
      }
      if (this.endRequest !== null || this.status !== 'in_progress') break;
      if (this.queue.length === 0 && !arming.armed) this.armNextTurn();
      const woke = await condition(
        () => this.queue.length > 0 || this.endRequest !== null || this.status !== 'in_progress' || arming.failure !== null,
        this.msUntilIdleDeadline(),
      );
      // Whatever woke us, the armed turn is settled first: used by the caller, or taken back.
      await arming.disarm();
      if (this.queue.length) await this.onUtterance(this.queue.shift()!);
      else if (!woke && this.status === 'in_progress' && this.endRequest === null) await this.onIdle();
    }
    // Ended before the loop ran (a hang-up whose report overtook the greeting's): the turn armed
    // during the greeting may have been taken and its reply heard, so it is settled here too. Only
    // such calls ask for the patch (a marker costs every call that asks), and older ones replay without it.
    if (arming.armed && this.patches.has('disarm-after-greeting-end')) {
      await arming.disarm();
    }
  }

  /**
   * Arms the next turn. `whileSaying`: the greeting being spoken now; the plan assumes the caller
   * hears it whole (its utterance id is the speech before this one).
   */
  private armNextTurn(whileSaying?: string): void {
    const request = this.llmRequest();
    if (whileSaying !== undefined) request.messages = [...request.messages, { role: 'assistant', content: whileSaying }];
    const afterSpeech = whileSaying !== undefined ? this.lastSpeechId() : undefined;
    const utteranceId = this.nextSpeechId();
    this.armedRequest = { request, utteranceId };
    // Only calls without heartbeats: their gateway completes activities itself, and may hold one back.
    const releasable = this.presenceLiveness && this.patches.has('arm-released-with-media');
    const carryOn = this.presenceLiveness && this.patches.has('armed-turn-runs') ? runLimits(this.input.agent.pipeline, this.msUntilIdleDeadline()) : undefined;
    this.arming!.arm(request, utteranceId, { afterSeq: this.lastUtteranceSeq, afterSpeech, releasedWithMedia: releasable, carryOn });
  }

  /**
   * LLM or gateway failures end the call as failed. So does anything unexpected: failing the
   * workflow task instead would retry it for ever, leaving the call open and its line off-hook.
   */
  private failOn(err: unknown): void {
    if (err instanceof ContinueAsNew || isCancellation(err)) throw err;
    if (err instanceof LlmUnavailable) this.fail(err.message, 'llm');
    else if (err instanceof SpeechUnavailable) this.fail(err.message, 'tts');
    // Several waits may report one lost gateway (the media session, an armed turn): recorded once.
    else if (err instanceof GatewayLost) {
      if (!(this.presenceLiveness && isFinal(this.status))) this.fail(err.message, 'gateway');
    }
    else this.fail(`internal error: ${err instanceof Error ? err.message : String(err)}`, 'workflow');
  }

  private async waitForAnswer(): Promise<void> {
    if (this.status !== 'ringing') return;
    const settled = await condition(() => this.status !== 'ringing' || this.endRequest !== null, `${this.input.options.ringTimeoutSecs}s`);
    if (!settled) {
      this.recorder.record('call_status', { status: 'no_answer', source: 'ring_timeout' });
      this.moveTo('no_answer');
    } else if (this.status === 'ringing') {
      this.moveTo('no_answer'); // ended before anyone answered
    }
  }

  /**
   * Greeting and pre-call tools in parallel, then the flow's initial node. A client-managed call
   * gets no greeting and enters its initial node silently: the agent speaks only when spoken to.
   */
  private async begin(): Promise<void> {
    const { agent, customParameters } = this.input;
    const preCall = agent.pre_call_tool_ids.map((id) => this.runToolForContext(id, { ...customParameters }, 'pre_call'));
    try {
      if (agent.greeting && !this.clientManaged) {
        this.greeting = substitute(agent.greeting, this.conv.variables);
        // The first turn is armed while the greeting plays (if nothing else comes before it): armed
        // after the greeting's result, it was often later than the caller's answer under load.
        // patched: calls recorded before it arm after the greeting on replay.
        const early = this.arming !== null && preCall.length === 0 && !initialNode(agent) && this.patches.has('arm-during-greeting');
        const saying = this.agentSays(this.greeting);
        if (early) this.armNextTurn(this.greeting);
        const heard = await saying;
        // Cut off: the plan assumed the whole greeting. The gateway does not use it then; taken back.
        if (early && heard !== this.greeting) await this.arming!.disarm();
      }
      await Promise.all(preCall);
      const first = initialNode(agent);
      if (first) await this.enterNode(first, null, { silent: this.clientManaged });
    } catch (err) {
      this.failOn(err);
    }
    this.greetingDone = true;
    this.lastActivityMs = Date.now();
    // Arming the first turn does not wait for this write: under load that round trip took longer
    // than the caller's pause after the greeting. Writes stay in order (the recorder chains them).
    if (this.patches.has('greeting-write-unawaited')) void this.recorder.flush(this.patch());
    else await this.recorder.flush(this.patch());
  }

  private async onUtterance(u: Utterance): Promise<void> {
    this.noteUtteranceSeq(u.seq);
    this.recordGatewayEvents(u.events);
    const backchannel = isBackchannel(u, turnPolicyOf(this.input.agent.pipeline, this.input.agent.stt.language));
    // An armed turn's reply already played: the caller spoke before its events, so at the gateway's time.
    // utterance_seq: the gateway's number for it, which tells a live stream which turns a run still holds.
    const data = { text: u.text, ...(u.seq !== undefined ? { utterance_seq: u.seq } : {}), ...(backchannel ? { backchannel: true } : {}) };
    this.recorder.record('user_spoke', data, u.prepared ? u.prepared.atMs : Date.now());
    if (backchannel) {
      this.turnResults.set(u.id, this.turnResult([]));
      return;
    }
    this.idleWarned = false;
    this.conv.history.push({ role: 'user', content: u.text });
    // A run's earlier turn is recorded at the gateway's time, like its utterance, not at this task's.
    const at = u.prepared?.answeredAtMs;
    const replies = at === undefined ? await this.agentTurn(undefined, u.prepared) : await this.recorder.stampedAt(at, () => this.agentTurn(undefined, u.prepared));
    this.turns++;
    this.turnResults.set(u.id, this.turnResult(replies));
    this.lastActivityMs = Date.now();
    // A turn run's turns are written together, with the last of them.
    if (this.queue.length === 0 || !this.patches.has('armed-turn-runs')) void this.recorder.flush(this.patch());
  }

  private async onIdle(): Promise<void> {
    if (this.clientManaged) {
      this.recorder.record('call_status', { status: 'idle_timeout', source: 'safety_limit' });
      this.requestEnd('idle_timeout');
      return;
    }
    if (this.idleWarned) {
      this.recorder.record('call_status', { status: 'idle_timeout', source: 'idle_timer' });
      this.requestEnd('idle_timeout');
      return;
    }
    this.idleWarned = true;
    await this.agentTurn(IDLE_PROMPT);
    void this.recorder.flush(this.patch());
  }

  /** Time until the next idle deadline: the warning, then the end, both from the last activity. */
  private msUntilIdleDeadline(): number {
    const { idle_warn_secs, idle_end_secs } = this.input.agent.pipeline;
    const afterSecs = this.clientManaged ? CLIENT_MANAGED_SAFETY_LIMIT_SECS : this.idleWarned ? idle_end_secs : idle_warn_secs;
    const deadline = this.lastActivityMs + afterSecs * 1000;
    return Math.max(deadline - Date.now(), 1);
  }


  /**
   * The gateway was lost with a turn run armed: the turns it had answered but not reported are
   * read back from its journal (src/gateway/run-journal.ts) and recorded like any reported turn.
   */
  private async recoverLostRun(): Promise<void> {
    let turns: RunTurn[] = [];
    try {
      turns = await readRunJournal({ callId: this.input.callId, afterSeq: this.lastUtteranceSeq });
    } catch {
      return; // PostgreSQL away for good: the call ends without them, as before turn runs
    }
    for (const t of turns) await this.onUtterance(this.runTurnUtterance(t));
  }

  private async finish(): Promise<CallSummary> {
    if (this.arming?.failure && this.patches.has('armed-turn-runs')) await this.recoverLostRun();
    // Replies the gateway spoke (armed, or alone during a Temporal outage) whose reports arrived
    // after the call was asked to end: the caller heard them, so the transcript keeps them.
    if (this.presenceLiveness && !isFinal(this.status)) {
      for (const u of this.queue.splice(0)) {
        if (u.prepared?.thought) await this.onUtterance(u);
        else this.recordGatewayEvents(u.events);
      }
    }
    this.voicemail.settle(this.startTimeMs !== null);
    // A machine's line closing (the vendor's hang-up after our stream closed may overtake the
    // gateway's report) is still the voicemail ending the call.
    if (this.voicemail.answeredBy === 'machine' && (this.endRequest ?? 'user_ended') === 'user_ended' && this.patches.has('voicemail-end-reason')) this.endRequest = 'voicemail';
    if (!isFinal(this.status)) {
      const reason = this.endRequest ?? 'user_ended';
      this.moveTo('completed', reason);
    }
    await this.closeMedia();
    // A transferred call is the destination's now: hanging it up would cut the caller off.
    if (this.input.channel === 'voice' && !this.providerEnded && this.endReason !== 'transferred') await hangUpProviderCall(this.input.callId, this.patches);
    const endMs = this.handedOverAtMs ?? Date.now();
    const duration = this.startTimeMs === null ? null : Math.max(0, (endMs - this.startTimeMs) / 1000);
    this.recorder.record('call_ended', {
      status: this.status,
      end_reason: this.endReason,
      duration,
      transcript: this.transcript(),
      usage: this.totals,
      context: this.input.customParameters,
    });
    const analysis = plannedAnalysis(this.input, this.patches);
    const pending = analysis ? { analysis_status: 'pending' as const } : {};
    await this.recorder.flush({ ...this.patch(), end_time: endMs, duration, end_reason: this.endReason, ...pending });
    await this.recorder.settle({ status: this.status, end_time: endMs, duration, end_reason: this.endReason });
    this.finalRecorded = true;
    if (analysis) await runPostCallAnalysis(this.input, this.recorder, analysis);
    await this.recorder.drain();
    await condition(allHandlersFinished);
    return { status: this.status, end_reason: this.endReason, duration, totals: this.totals };
  }



  private shouldContinueAsNew(): boolean {
    return workflowInfo().continueAsNewSuggested && this.queue.length === 0;
  }

  /**
   * Long calls: carry the state into a fresh history (full transcripts live in PostgreSQL). Only
   * between turns: if a message arrived meanwhile, it is answered first and we try again later.
   */
  private async continueAsNew(): Promise<void> {
    // No activity is awaited here: a conversation that never pauses must still get to continue.
    // Unconfirmed event writes are carried over and repeated by the next run (idempotent).
    // Let the handlers of answered turns return their results before this run closes.
    await condition(() => allHandlersFinished() || this.queue.length > 0 || this.endRequest !== null);
    if (this.queue.length > 0 || this.endRequest !== null || !allHandlersFinished()) return;
    return continueAsNew<(input: CallWorkflowInput) => Promise<CallSummary>>({
      ...this.input,
      carried: {
        status: this.status,
        startTimeMs: this.startTimeMs,
        nodeKey: this.conv.nodeKey,
        variables: this.conv.variables,
        history: trimHistory(this.conv.history, HISTORY_KEPT_ON_CONTINUE),
        injectedContext: this.conv.injectedContext,
        nextSeq: this.recorder.nextSeq,
        totals: this.totals,
        lastUserActivityMs: this.lastActivityMs,
        gatewayTaskQueue: this.gatewayTaskQueue,
        unwrittenEvents: this.recorder.unwritten(),
        ...(this.arming ? { lastUtteranceSeq: this.lastUtteranceSeq } : {}),
      },
    });
  }
}
