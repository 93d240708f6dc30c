/**
 * Warm transfer (docs/phone-operations.md#warm-transfer): the caller waits on hold while the agent
 * briefs the person at the destination, who then takes the call or not.
 *
 * 1. An activity puts the caller's leg on hold (the vendor's conference, hold audio) and dials the
 *    destination as a call of its own; the caller's stream ends.
 * 2. The destination answers: its leg comes to the media gateway as a new stream of this call
 *    (`awaitingStream`). The agent speaks a summary of the call made by the LLM from the
 *    transcript (`summary_prompt`), and answers questions (at most MAX_QUESTIONS).
 * 3. 1 / "connect": the destination's leg is moved into the caller's conference (its stream ends:
 *    the agent leaves); the call ends `completed` / `transferred`. Otherwise — 2 / "no", busy, no
 *    answer within `max_wait_secs`, a machine, a hang-up, no decision — the destination's leg is
 *    hung up and the caller's leg comes back to a new stream: the agent tells them and carries on.
 *
 * Every step is an activity (retried while the vendor is unreachable) or a durable timer, so a
 * worker that dies midway resumes where it was. Workflow code: deterministic, no I/O.
 */
import { condition, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { failureReason, targetText, TRANSFER_CALL, transferTarget, warmSettings, type TransferDestination } from '../src/shared/transfer';
import {
  briefingDecision,
  briefingInput,
  CONNECT_PROMPT,
  fallbackSummary,
  questionInstruction,
  summaryInstruction,
  transcriptText,
  type TranscriptLine,
} from '../src/shared/warm-briefing';
import type { CallContext } from './call-context';
import type { CallInbox } from './call-inbox';
import type { CallMedia } from './call-media';
import type { TransferState } from './call-transfer';
import { isFinal } from './call-status';

// The vendor's own no-answer report comes at max_wait_secs; this margin covers a lost report.
const RING_MARGIN_SECS = 15;
// How long the answered leg's stream may take to reach the gateway.
const BRIEFING_CONNECT_SECS = 20;
// Questions the agent answers before it only repeats the choice.
const MAX_QUESTIONS = 2;

const { warmTransferStart, warmTransferJoin, warmTransferGiveBack } = proxyActivities<Activities>({
  startToCloseTimeout: '20s',
  // Only an unreachable vendor is thrown as retryable; a refusal comes back as a result.
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '5s', maximumAttempts: 6 },
});
const { llmTurn } = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '1s', maximumAttempts: 2 },
});

type Refuse = (message: string) => string;

export class WarmTransfer {
  constructor(
    private readonly ctx: CallContext,
    private readonly media: CallMedia,
    private readonly inbox: CallInbox,
  ) {}

  /** The caller hung up, or the call was asked to end. */
  private over(): boolean {
    return this.ctx.endRequest !== null || isFinal(this.ctx.status);
  }

  /** Runs a warm transfer_call; returns the tool result for the LLM. */
  async run(destination: TransferDestination, source: string, refuse: Refuse): Promise<string> {
    const { ctx } = this;
    const { input, recorder } = ctx;
    const name = destination.name;
    const settings = warmSettings(destination);
    const target = transferTarget(destination);
    const state: TransferState = { destination: name, mode: 'warm', outcome: null, answered: null, awaitingStream: true };
    ctx.transfer = state;
    recorder.record('transfer_started', { destination: name, mode: 'warm', to: targetText(target), hold_audio: settings.holdAudio, max_wait_secs: settings.maxWaitSecs });
    const started = await warmTransferStart({ callId: input.callId, target, holdAudio: settings.holdAudio, maxWaitSecs: settings.maxWaitSecs }).catch(
      (err: Error) => ({ ok: false as const, held: false, error: `the provider could not be reached: ${err.message}` }),
    );
    if (!started.ok && !started.held) {
      ctx.transfer = null;
      recorder.record('transfer_failed', { destination: name, mode: 'warm', reason: started.error });
      return refuse(`the transfer could not start (${started.error})`);
    }
    // The caller's leg left our stream for the hold: whatever that stream reports now is stale.
    this.media.detach();
    this.inbox.newStream();
    if (!started.ok) return this.giveBack(name, null, started.error, source);
    const humanCallId = started.humanCallId;
    recorder.record('transfer_ringing', { destination: name, human_call_id: humanCallId });

    const reported = await condition(() => state.answered !== null || state.outcome !== null || this.over(), `${settings.maxWaitSecs + RING_MARGIN_SECS}s`);
    if (this.over()) return this.giveBack(name, humanCallId, 'the caller hung up during the transfer', source);
    if (!state.answered) {
      const reason = reported && state.outcome ? failureReason(state.outcome.outcome) : 'no answer';
      return this.giveBack(name, humanCallId, reason, source, state.outcome?.detail);
    }
    // The leg that answered, as its callback names it: Plivo's call API only returned a request
    // id, and its Transfer and hang-up need the call's own id (on Twilio the two are the same).
    const answeredId = state.answered.detail?.human_call_id;
    const humanLeg = typeof answeredId === 'string' && answeredId ? answeredId : humanCallId;
    const briefed = await this.brief(name, settings.summaryPrompt, settings.maxWaitSecs, state);
    if (briefed !== 'connect') return this.giveBack(name, humanLeg, briefed, source);
    return this.join(name, humanLeg, source);
  }

  /** The destination's leg on our stream: the summary, questions, until a decision; 'connect' or why not. */
  private async brief(name: string, summaryPrompt: string, waitSecs: number, state: TransferState): Promise<string> {
    const { ctx } = this;
    const connected = await condition(() => ctx.gatewayTaskQueue !== null || state.outcome !== null || this.over(), `${BRIEFING_CONNECT_SECS}s`);
    if (!connected || ctx.gatewayTaskQueue === null) return this.over() ? 'the caller hung up during the transfer' : "the destination's audio never reached the media gateway";
    await this.media.connect();
    // Whatever was queued belongs to the caller's part; the destination speaks from here on.
    this.inbox.queue.length = 0;
    ctx.recorder.record('transfer_briefing_started', { destination: name });
    const transcript = transcriptText(ctx.transcript() as TranscriptLine[]);
    const summary = await this.ask(summaryInstruction(summaryPrompt, name), briefingInput(transcript), () => fallbackSummary(lastCallerWords(ctx)));
    await this.speak(`${summary} ${CONNECT_PROMPT}`);
    ctx.recorder.record('transfer_briefing_completed', { destination: name, summary });
    ctx.transferSummary = summary;
    for (let questions = 0; ; questions++) {
      const replied = await condition(() => this.inbox.queue.length > 0 || state.outcome !== null || !this.media.sessionOpen || this.over(), `${waitSecs}s`);
      if (this.over()) return 'the caller hung up during the transfer';
      if (state.outcome !== null || !this.media.sessionOpen) return 'the destination hung up during the briefing';
      if (!replied) return `no answer from the destination within ${waitSecs} s of the briefing`;
      const words = this.inbox.queue.splice(0).map((u) => u.text).join(' ');
      const decision = briefingDecision(words);
      ctx.recorder.record('transfer_briefing_reply', { destination: name, text: words, decision });
      if (decision === 'connect') return 'connect';
      if (decision === 'decline') return 'declined';
      const answer = questions < MAX_QUESTIONS ? await this.ask(questionInstruction(name), briefingInput(transcript, words), () => '') : '';
      await this.speak(answer ? `${answer} ${CONNECT_PROMPT}` : CONNECT_PROMPT);
    }
  }

  /** The hand-over: the destination's leg joins the caller's conference; the agent leaves. */
  private async join(name: string, humanCallId: string, source: string): Promise<string> {
    const { ctx } = this;
    // The vendor ends the briefing stream for the join: its end is not anyone hanging up.
    this.media.detach();
    const joined = await warmTransferJoin({ callId: ctx.input.callId, humanCallId }).catch((err: Error) => ({ ok: false as const, error: `the provider could not be reached: ${err.message}` }));
    if (!joined.ok) return this.giveBack(name, humanCallId, joined.error, source);
    ctx.transfer!.awaitingStream = false;
    ctx.handedOverAtMs = Date.now();
    ctx.recorder.record('transfer_completed', { destination: name, mode: 'warm', human_call_id: humanCallId });
    ctx.recorder.record('tool_result', { function: TRANSFER_CALL, result: `transferred to ${name}`, source });
    ctx.requestEnd('transferred');
    return `The caller was transferred to ${name}.`;
  }

  /** The transfer did not happen: the destination's leg hung up, the caller's back on a new stream. */
  private async giveBack(name: string, humanCallId: string | null, reason: string, source: string, detail?: Record<string, unknown>): Promise<string> {
    const { ctx } = this;
    const { recorder } = ctx;
    // The briefing stream, if it is up, is closed first: the gateway holds one stream per call.
    await this.media.leave();
    this.inbox.newStream();
    recorder.record('transfer_failed', { destination: name, mode: 'warm', reason, ...(detail ?? {}) });
    const back = await warmTransferGiveBack({ callId: ctx.input.callId, humanCallId }).catch((err: Error) => ({ ok: false as const, error: `the provider could not be reached: ${err.message}` }));
    if (this.over()) {
      ctx.transfer = null;
      recorder.record('tool_result', { function: TRANSFER_CALL, result: null, error: reason, source });
      return `The transfer did not complete: ${reason}.`;
    }
    if (!back.ok) {
      // The caller is held where the platform cannot reach them: the call is over for the agent.
      ctx.transfer = null;
      recorder.record('tool_result', { function: TRANSFER_CALL, result: null, error: `${reason}; the caller could not be brought back (${back.error})`, source });
      ctx.requestEnd('agent_ended');
      return `The transfer did not complete: ${reason}.`;
    }
    await this.media.connect();
    ctx.transfer = null;
    recorder.record('tool_result', { function: TRANSFER_CALL, result: null, error: `transfer failed: ${reason}`, source });
    return `The transfer to ${name} did not go through (${reason}). The caller is back on the line with you: tell them, and carry on helping them.`;
  }

  /** The briefing LLM: a short answer, or `fallback()` when it fails. */
  private async ask(system: string, user: string, fallback: () => string): Promise<string> {
    const { agent, callId } = this.ctx.input;
    try {
      const result = await llmTurn({
        callId,
        provider: agent.llm_provider,
        model: agent.llm_model,
        temperature: agent.llm_settings.temperature,
        maxTokens: agent.llm_settings.max_tokens,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        tools: [],
      });
      this.ctx.totals.llm_prompt_tokens += result.usage.prompt_tokens;
      this.ctx.totals.llm_completion_tokens += result.usage.completion_tokens;
      return result.content.trim() || fallback();
    } catch {
      return fallback();
    }
  }

  /** Speaks to the destination (not the caller's conversation: kept out of its history). */
  private async speak(text: string): Promise<void> {
    const channel = this.ctx.voice;
    if (!channel) return;
    try {
      const spoken = await channel.say(text, this.ctx.nextSpeechId());
      this.ctx.countSpeech(spoken);
      this.ctx.recorder.record('transfer_briefing_spoke', { text: spoken.heardText, ...(spoken.interrupted ? { interrupted: true } : {}) });
    } catch {
      // The destination's stream went away: the decision wait sees its end.
    }
  }
}

function lastCallerWords(ctx: CallContext): string | null {
  const lines = ctx.transcript().filter((l) => l.role === 'user');
  return lines.length ? lines[lines.length - 1]!.text : null;
}
