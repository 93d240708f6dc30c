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
  proxyActivities,
  proxyLocalActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { substitute } from '../src/shared/template';
import {
  GATEWAY_HEARTBEAT_TIMEOUT_SECS,
  GATEWAY_PROBE_TIMEOUT_SECS,
  type CallWorkflowInput,
  type GatewayActivities,
  type MediaSessionResult,
  type RunTurn,
} from './call-definitions';
import { GatewayLost, LlmUnavailable, SpeechUnavailable, VoiceChannel } from './channels';
import { isFinal } from './call-status';
import { hangUpProviderCall } from './provider-hangup';
import { initialNode, trimHistory, wordCount } from './conversation';
import { TransferTurns } from './call-transfer';
import { runLimits } from './turn-arming';
import { plannedAnalysis, runPostCallAnalysis } from './post-call-analysis';
import {
  CLIENT_MANAGED_SAFETY_LIMIT_SECS,
  HISTORY_KEPT_ON_CONTINUE,
  IDLE_PROMPT,
  MEDIA_CLOSE_WAIT,
  MEDIA_CONNECT_TIMEOUT,
  type CallSummary,
  type Utterance,
} from './call-state';

export type { CallSummary, Utterance } from './call-state';
export { CLIENT_MANAGED_SAFETY_LIMIT_SECS } from './call-state';

const { readRunJournal } = proxyLocalActivities<Activities>({ startToCloseTimeout: '10s', retry: { initialInterval: '500ms', maximumAttempts: 5 } });

export class CallSession extends TransferTurns {
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
    // Make an answered (or unanswered) call visible at once, not only after the greeting.
    if (this.status !== this.input.initialStatus) void this.recorder.flush(this.patch());
    if (this.input.channel === 'voice') await this.connectMedia();
    if (this.status === 'in_progress' && !this.input.carried && this.endRequest === null) await this.begin();
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

  /** PostgreSQL refused a write of this call (retrying cannot fix that): the call ends failed. */

  protected async connectMedia(): Promise<void> {
    if (isFinal(this.status) || this.endRequest !== null) return;
    const connected = await condition(() => this.gatewayTaskQueue !== null || this.endRequest !== null || isFinal(this.status), MEDIA_CONNECT_TIMEOUT);
    if (!connected) return this.fail('the audio stream never connected to a media gateway', 'gateway');
    if (this.gatewayTaskQueue === null) return;
    if (this.presenceLiveness) return this.holdMediaSession();
    if (this.recordingPath) void this.recorder.flush({ recording_path: this.recordingPath });
    const { mediaSession } = proxyActivities<GatewayActivities>({
      taskQueue: this.gatewayTaskQueue,
      scheduleToStartTimeout: '5s',
      startToCloseTimeout: '24h',
      heartbeatTimeout: GATEWAY_HEARTBEAT_TIMEOUT_SECS * 1000,
      retry: { maximumAttempts: 1 },
    });
    const generation = this.mediaGeneration;
    mediaSession({ callId: this.input.callId }).then(
      (result) => this.onMediaSessionEnd(result, generation),
      (err: Error) => {
        if (generation !== this.mediaGeneration) return; // a stream the call left for a transfer
        this.mediaClosed = true;
        if (!isFinal(this.status)) this.fail(`media gateway lost: ${(err.cause as Error | undefined)?.message ?? err.message}`, 'gateway');
      },
    );
  }

  /** Presence liveness: the media session waits on the gateway without heartbeats. */
  private holdMediaSession(): void {
    const channel = this.channel as VoiceChannel;
    void this.recorder.flush({ ...(this.recordingPath ? { recording_path: this.recordingPath } : {}), gateway_id: this.gatewayTaskQueue });
    const generation = this.mediaGeneration;
    channel.mediaSession().then(
      (result) => this.onMediaSessionEnd(result, generation),
      (err: unknown) => {
        if (generation !== this.mediaGeneration) return; // a stream the call left for a transfer
        this.mediaClosed = true;
        const message = err instanceof GatewayLost ? err.message : `media gateway lost: ${((err as Error).cause as Error | undefined)?.message ?? (err as Error).message}`;
        if (!isFinal(this.status)) this.fail(message, 'gateway');
      },
    );
  }

  private onMediaSessionEnd(result: MediaSessionResult, generation = this.mediaGeneration): void {
    this.recordGatewayEvents(result.events);
    this.arming?.releaseWithMedia(result.releasedArm);
    // The stream the vendor closed to dial a transfer destination: not the caller hanging up.
    if (generation !== this.mediaGeneration || (this.transferring && result.reason === 'hangup')) return;
    this.mediaClosed = true;
    if (result.reason === 'hangup') this.requestEnd('user_ended');
    // Histories recorded before a gateway could fail a call never hold this reason; the
    // marker keeps their replay on the old path should one ever carry it.
    else if (result.reason === 'failed' && this.patches.has('gateway-failure-fails-call') && !isFinal(this.status)) {
      this.fail(result.error?.message ?? 'the media gateway gave up on the call', result.error?.context ?? 'gateway');
    }
    // Only gateways that detect voicemail report this; calls recorded before them never hold it.
    else if (result.reason === 'voicemail' && this.patches.has('voicemail-ends-call') && !isFinal(this.status)) {
      if (result.goodbye) {
        this.recorder.record('agent_spoke', { text: result.goodbye });
        this.conv.history.push({ role: 'assistant', content: result.goodbye });
      }
      this.requestEnd('voicemail');
    }
    // Only gateways that drain report this; calls recorded before them never hold it.
    else if (result.reason === 'drained' && this.patches.has('gateway-drained-ends-call') && !isFinal(this.status)) this.onDrained(result.goodbye);
  }

  /**
   * The call's gateway drained (a deploy, a scale-down) and its deadline passed: it said goodbye
   * and closed the stream. The call ends as the agent's decision, with an event saying why.
   */
  private onDrained(goodbye: string | undefined): void {
    if (goodbye) {
      this.recorder.record('agent_spoke', { text: goodbye });
      this.conv.history.push({ role: 'assistant', content: goodbye });
    }
    this.recorder.record('call_status', { status: 'drained', source: 'gateway' });
    this.requestEnd('agent_ended');
  }

  /**
   * Presence liveness: when the watchdog reports the gateway lost, ask the gateway itself. One that
   * answers keeps the call (it only lost the database for a moment); one that does not is gone,
   * and everything waiting on it is released with GatewayLost (the call ends failed, once).
   */
  private async watchGateway(): Promise<void> {
    for (;;) {
      await condition(() => this.gatewaySuspect !== null || isFinal(this.status));
      const suspect = this.gatewaySuspect;
      if (!suspect || isFinal(this.status)) return;
      const channel = this.channel instanceof VoiceChannel && suspect.gatewayTaskQueue === this.gatewayTaskQueue ? this.channel : null;
      const alive = channel ? await channel.probe() : true;
      this.gatewaySuspect = null;
      if (alive) {
        this.recorder.record('call_status', { status: 'gateway_probed', source: 'watchdog', alive: true, reason: suspect.reason });
        continue;
      }
      channel!.abandon(`${suspect.reason}; the gateway did not answer a probe within ${GATEWAY_PROBE_TIMEOUT_SECS} s`);
    }
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
    const backchannel = u.duringAgentSpeech && wordCount(u.text) < this.input.agent.pipeline.min_words;
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

  /** Voice calls: let the goodbye play, then close the provider stream (which hangs up). */
  private async closeMedia(): Promise<void> {
    if (this.gatewayTaskQueue === null || this.mediaClosed) return;
    if (this.presenceLiveness) {
      const channel = this.channel as VoiceChannel;
      if (channel.isAbandoned) return;
      try {
        await channel.endMedia(this.endReason ?? 'user_ended');
        await condition(() => this.mediaClosed, MEDIA_CLOSE_WAIT);
      } catch {
        // The gateway is gone; its socket went with it.
      }
      return;
    }
    const { endMedia } = proxyActivities<GatewayActivities>({
      taskQueue: this.gatewayTaskQueue,
      scheduleToStartTimeout: '5s',
      startToCloseTimeout: '20s',
      retry: { maximumAttempts: 1 },
    });
    try {
      await endMedia({ callId: this.input.callId, reason: this.endReason ?? 'user_ended' });
      // The last utterance's gateway events come with the media session's result.
      await condition(() => this.mediaClosed, MEDIA_CLOSE_WAIT);
    } catch {
      // The gateway is gone; its socket went with it.
    }
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
