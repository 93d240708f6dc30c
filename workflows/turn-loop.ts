/**
 * The turn loop: the conversation from after the greeting until the call is asked to end. Each
 * round it waits for the caller's next utterance (call-inbox.ts), the idle deadline or the end;
 * on voice calls the next turn is armed on the gateway meanwhile (turn-arming.ts) and settled
 * before anything else happens. It answers utterances (turns of agent-turns.ts, backchannels
 * recorded only), warns and then ends an idle call, and continues as new when the history grows
 * long. Workflow code: deterministic, no I/O.
 */
import { allHandlersFinished, condition, continueAsNew, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { isBackchannel, turnPolicyOf, type TurnPolicy } from '../src/shared/turn-policy';
import type { CallWorkflowInput, RunTurn } from './call-definitions';
import type { CallContext, CallSummary } from './call-context';
import type { CallInbox } from './call-inbox';
import type { AgentTurns } from './agent-turns';
import { runLimits, type TurnArming } from './turn-arming';
import { isFinal } from './call-status';
import { trimHistory } from './conversation';
import { CLIENT_MANAGED_SAFETY_LIMIT_SECS, HISTORY_KEPT_ON_CONTINUE, IDLE_PROMPT } from './call-limits';
import type { Utterance } from './utterance';

const { readRunJournal } = proxyLocalActivities<Activities>({ startToCloseTimeout: '10s', retry: { initialInterval: '500ms', maximumAttempts: 5 } });

export class TurnLoop {
  private idleWarned = false;

  constructor(
    private readonly ctx: CallContext,
    private readonly inbox: CallInbox,
    private readonly agent: AgentTurns,
    /** Voice calls: the next turn waits on the gateway; null on text calls. */
    private readonly arming: TurnArming | null,
  ) {}

  async run(): Promise<void> {
    const { ctx, inbox, arming } = this;
    while (ctx.live) {
      if (workflowInfo().continueAsNewSuggested && inbox.queue.length === 0) {
        if (arming) await arming.disarm();
        await this.continueAsNew();
      }
      if (!ctx.live) break;
      if (arming && inbox.queue.length === 0 && !arming.armed) this.armNext();
      const woke = await condition(() => inbox.queue.length > 0 || !ctx.live || (arming !== null && arming.failure !== null), this.msUntilIdleDeadline());
      // Whatever woke us, the armed turn is settled first: used by the caller, or taken back.
      if (arming) await arming.disarm();
      if (inbox.queue.length) await this.answer(inbox.queue.shift()!);
      else if (!woke && ctx.live) await this.onIdle();
    }
    // Ended before the loop ran (a hang-up whose report overtook the greeting's): the turn armed
    // during the greeting may have been taken and its reply heard, so it is settled here too.
    if (arming?.armed) await arming.disarm();
  }

  /**
   * Arms the next turn (voice calls). `whileSaying`: the greeting being spoken now; the plan
   * assumes the caller hears it whole (its utterance id is the speech before this one).
   */
  armNext(whileSaying?: string): void {
    const { ctx } = this;
    const request = this.agent.llmRequest();
    if (whileSaying !== undefined) request.messages = [...request.messages, { role: 'assistant', content: whileSaying }];
    const afterSpeech = whileSaying !== undefined ? ctx.lastSpeechId() : undefined;
    const utteranceId = ctx.nextSpeechId();
    const carryOn = runLimits(ctx.input.agent.pipeline, this.msUntilIdleDeadline());
    this.arming!.arm(request, utteranceId, { afterSeq: this.inbox.lastSeq, afterSpeech, carryOn });
  }

  private policy: TurnPolicy | undefined;

  /** One utterance: a backchannel is recorded only; anything else is a turn of the agent. */
  private async answer(u: Utterance): Promise<void> {
    const { ctx } = this;
    this.inbox.noteSeq(u.seq);
    ctx.recordGatewayEvents(u.events);
    // The agent's policy in its language, with its own phrases: the same the gateway judged by.
    this.policy ??= turnPolicyOf(ctx.input.agent.pipeline, ctx.input.agent.stt.language);
    const backchannel = isBackchannel(u, this.policy);
    // An armed turn's reply already played: the caller spoke before its events, so at the gateway's time.
    // utterance_seq: the gateway's number for it, which tells a live stream which turns a run still holds.
    const data = { text: u.text, ...(u.seq !== undefined ? { utterance_seq: u.seq } : {}), ...(backchannel ? { backchannel: true } : {}) };
    ctx.recorder.record('user_spoke', data, u.prepared ? u.prepared.atMs : Date.now());
    if (backchannel) {
      this.inbox.turnResults.set(u.id, ctx.turnResult([]));
      return;
    }
    this.idleWarned = false;
    ctx.conv.history.push({ role: 'user', content: u.text });
    // A run's earlier turn is recorded at the gateway's time, like its utterance, not at this task's.
    const at = u.prepared?.answeredAtMs;
    const replies = at === undefined ? await this.agent.turn(undefined, u.prepared) : await ctx.recorder.stampedAt(at, () => this.agent.turn(undefined, u.prepared));
    ctx.turns++;
    this.inbox.turnResults.set(u.id, ctx.turnResult(replies));
    ctx.lastActivityMs = Date.now();
    // A turn run's turns are written together, with the last of them.
    if (this.inbox.queue.length === 0) void ctx.recorder.flush(ctx.patch());
  }

  private async onIdle(): Promise<void> {
    const { ctx } = this;
    if (ctx.clientManaged || this.idleWarned) {
      const source = ctx.clientManaged ? 'safety_limit' : 'idle_timer';
      ctx.recorder.record('call_status', { status: 'idle_timeout', source });
      ctx.requestEnd('idle_timeout');
      return;
    }
    this.idleWarned = true;
    await this.agent.turn(IDLE_PROMPT);
    void ctx.recorder.flush(ctx.patch());
  }

  /** Time until the next idle deadline: the warning, then the end, both from the last activity. */
  private msUntilIdleDeadline(): number {
    const { ctx } = this;
    const { idle_warn_secs, idle_end_secs } = ctx.input.agent.pipeline;
    const afterSecs = ctx.clientManaged ? CLIENT_MANAGED_SAFETY_LIMIT_SECS : this.idleWarned ? idle_end_secs : idle_warn_secs;
    const deadline = ctx.lastActivityMs + afterSecs * 1000;
    return Math.max(deadline - Date.now(), 1);
  }

  /**
   * At the end. The gateway was lost with a turn run armed: the turns it had answered but not
   * reported are read back from its journal (src/gateway/workflow-link/run-journal.ts) and recorded like any
   * reported turn. Replies the gateway spoke (armed, or alone during a Temporal outage) whose
   * reports arrived after the call was asked to end: the caller heard them, so the transcript
   * keeps them.
   */
  async settle(): Promise<void> {
    const { ctx, inbox } = this;
    if (this.arming?.failure) {
      let turns: RunTurn[] = [];
      try {
        turns = await readRunJournal({ callId: ctx.input.callId, afterSeq: inbox.lastSeq });
      } catch {
        // PostgreSQL away for good: the call ends without them.
      }
      for (const t of turns) await this.answer(inbox.runTurn(t));
    }
    if (isFinal(ctx.status)) return;
    for (const u of inbox.queue.splice(0)) {
      if (u.prepared?.thought) await this.answer(u);
      else ctx.recordGatewayEvents(u.events);
    }
  }

  /**
   * Long calls: carry the state into a fresh history (full transcripts live in PostgreSQL). Only
   * between turns: if a message arrived meanwhile, it is answered first and we try again later.
   */
  private async continueAsNew(): Promise<void> {
    const { ctx, inbox } = this;
    // No activity is awaited here: a conversation that never pauses must still get to continue.
    // Unconfirmed event writes are carried over and repeated by the next run (idempotent).
    // Let the handlers of answered turns return their results before this run closes.
    await condition(() => allHandlersFinished() || inbox.queue.length > 0 || ctx.endRequest !== null);
    if (inbox.queue.length > 0 || ctx.endRequest !== null || !allHandlersFinished()) return;
    return continueAsNew<(input: CallWorkflowInput) => Promise<CallSummary>>({
      ...ctx.input,
      carried: {
        status: ctx.status,
        startTimeMs: ctx.startTimeMs,
        nodeKey: ctx.conv.nodeKey,
        variables: ctx.conv.variables,
        history: trimHistory(ctx.conv.history, HISTORY_KEPT_ON_CONTINUE),
        injectedContext: ctx.conv.injectedContext,
        nextSeq: ctx.recorder.nextSeq,
        totals: ctx.totals,
        lastUserActivityMs: ctx.lastActivityMs,
        gatewayTaskQueue: ctx.gatewayTaskQueue,
        unwrittenEvents: ctx.recorder.unwritten(),
        ...(this.arming ? { lastUtteranceSeq: inbox.lastSeq } : {}),
      },
    });
  }
}
