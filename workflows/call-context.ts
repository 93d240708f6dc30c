/**
 * One call's state, shared by the call's collaborators (call-workflow.ts builds them): its status
 * and the transitions between them, the conversation (node, variables, LLM history), totals, the
 * recorder its events go through, and the channel the agent speaks through. State and the small
 * operations on it only: what happens on a call is in the files call-workflow.ts names. Workflow
 * code: deterministic, no I/O.
 */
import { ContinueAsNew, isCancellation, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { CallStatus as CallStatusAttr } from '../src/shared/search-attributes';
import { callVariables, substitute } from '../src/shared/template';
import type { CallRecordPatch, CallStatus, CallWorkflowInput, EndReason, GatewayEvent, TextTurnResult, UsageTotals } from './call-definitions';
import { CallRecorder } from './call-recorder';
import { GatewayLost, LlmUnavailable, SpeechUnavailable, TextChannel, VoiceChannel, type CallChannel, type Spoken } from './channels';
import { canMove, isFinal } from './call-status';
import { detectsVoicemail } from './voice-setup';
import { CallVoicemail } from './call-voicemail';
import type { ConversationState } from './conversation';
import type { TransferState } from './call-transfer';

export interface CallSummary {
  status: CallStatus;
  end_reason: EndReason | null;
  duration: number | null;
  totals: UsageTotals;
}

export class CallContext {
  status: CallStatus;
  endReason: EndReason | null = null;
  /** Asked to end (end_call, a hang-up, POST /api/calls/end, idle): the turn loop stops. */
  endRequest: EndReason | null = null;
  startTimeMs: number | null;
  greeting: string | null = null;
  greetingDone = false;
  turns = 0;
  /** The last activity the idle timers count from (the caller's words, the agent's reply). */
  lastActivityMs: number;
  totals: UsageTotals;
  readonly conv: ConversationState;
  readonly recorder: CallRecorder;
  /** How the agent speaks: text, or the media gateway holding the call's stream (null until it connects). */
  channel: CallChannel | null = null;
  gatewayTaskQueue: string | null;
  recordingPath: string | null = null;
  /** Every recording file of the call's streams, in order (the first is recordingPath). */
  recordingParts: string[] = [];
  /** The provider reported the call over (a terminal status): nothing to hang up. */
  providerEnded = false;
  /** The agent's prompt with the call's variables as they were at call start. */
  readonly prompt: string;
  /** POST /api/calls/start: the client drives the call; the agent only answers its messages. */
  readonly clientManaged: boolean;
  /** Who answered, on outbound calls that detect voicemail (call-voicemail.ts). */
  readonly voicemail: CallVoicemail;
  /** The call's final state is in PostgreSQL (what POST /api/calls/end waits for; the analysis comes after). */
  finalRecorded = false;
  /** A transfer under way (call-transfer.ts): a stream closing now is not the caller hanging up. */
  transfer: TransferState | null = null;
  /** When the caller was handed over: the call's end time and duration stop there. */
  handedOverAtMs: number | null = null;
  /** A warm transfer's briefing summary (call-warm-transfer.ts), for the call record. */
  transferSummary: string | null = null;
  private speechIds = 0;

  constructor(readonly input: CallWorkflowInput) {
    const carried = input.carried;
    this.status = carried?.status ?? input.initialStatus;
    this.startTimeMs = carried?.startTimeMs ?? (input.initialStatus === 'in_progress' ? Date.now() : null);
    this.totals = carried?.totals ?? { llm_prompt_tokens: 0, llm_completion_tokens: 0, tts_characters: 0 };
    this.lastActivityMs = carried?.lastUserActivityMs ?? Date.now();
    const startVariables = callVariables(input.customParameters, input.agent.context_variables);
    this.prompt = substitute(input.agent.prompt, startVariables);
    this.clientManaged = input.channel === 'manual';
    this.conv = {
      nodeKey: carried?.nodeKey ?? null,
      variables: carried?.variables ?? startVariables,
      injectedContext: carried?.injectedContext ?? [],
      history: carried?.history ?? [],
    };
    this.voicemail = new CallVoicemail(detectsVoicemail(input) ? input.agent.voicemail!.action : null);
    this.recorder = new CallRecorder(input, carried?.nextSeq ?? 1, carried?.unwrittenEvents);
    this.recorder.onRefused = (reason, seqs) => this.onRecordRefused(reason, seqs);
    if (carried) this.greetingDone = true;
    this.gatewayTaskQueue = carried?.gatewayTaskQueue ?? input.gatewayTaskQueue ?? null;
    if (input.channel !== 'voice') this.channel = new TextChannel(input.options);
    else if (this.gatewayTaskQueue) this.channel = this.voiceChannel(this.gatewayTaskQueue);
  }

  get isVoice(): boolean {
    return this.input.channel === 'voice';
  }

  /** In progress and not asked to end: the conversation goes on. */
  get live(): boolean {
    return this.status === 'in_progress' && this.endRequest === null;
  }

  requestEnd(reason: EndReason): void {
    this.endRequest ??= reason;
  }

  voiceChannel(taskQueue: string): VoiceChannel {
    return new VoiceChannel(this.input.callId, taskQueue, this.input.options);
  }

  requireChannel(): CallChannel {
    if (!this.channel) throw new GatewayLost('no media gateway holds this call');
    return this.channel;
  }

  /** The voice channel, if the call's stream is on a gateway now. */
  get voice(): VoiceChannel | null {
    return this.channel instanceof VoiceChannel ? this.channel : null;
  }

  nextSpeechId(): string {
    return `u${++this.speechIds}`;
  }

  /** The id nextSpeechId() gave last. */
  lastSpeechId(): string {
    return `u${this.speechIds}`;
  }

  /** Speech ids given so far (the planned greeting is `u1` while none was). */
  get speechCount(): number {
    return this.speechIds;
  }

  /** The agent speaks a fixed text (greeting, `say` pre-action, a transfer's message); returns what the caller heard. */
  async say(text: string): Promise<string> {
    const spoken = await this.requireChannel().say(text, this.nextSpeechId());
    this.countSpeech(spoken);
    if (spoken.heardText) {
      this.recorder.record('agent_spoke', { text: spoken.heardText, ...(spoken.interrupted ? { interrupted: true } : {}) });
      this.conv.history.push({ role: 'assistant', content: spoken.heardText });
    }
    return spoken.heardText;
  }

  countSpeech(spoken: Spoken): void {
    this.totals.tts_characters += spoken.characters;
    this.recordGatewayEvents(spoken.events);
  }

  recordGatewayEvents(events: GatewayEvent[] | undefined): void {
    for (const e of events ?? []) {
      if (typeof e?.type !== 'string') continue; // not an event: nothing to record
      this.recorder.record(e.type, e.data ?? {}, Number.isFinite(e.timestampMs) ? e.timestampMs : Date.now());
    }
  }

  /** A message the workflow could not handle: recorded, and the call goes on without it. */
  ignoredMessage(name: string, err: unknown): void {
    this.recorder.record('error', { message: `ignored a malformed ${name} message: ${err instanceof Error ? err.message : String(err)}`, context: 'workflow' });
  }

  // ---- status ----------------------------------------------------------------------------------

  moveTo(next: CallStatus, reason?: EndReason, atMs = Date.now()): boolean {
    const from = this.status;
    if (!canMove(from, next)) {
      this.recorder.record('call_status', { status: next, from, ignored: true }, atMs);
      return false;
    }
    this.status = next;
    if (next === 'in_progress') this.startTimeMs = Date.now();
    if (reason) this.endReason = reason;
    this.recorder.record('call_status', { status: next, from }, atMs);
    if (next === 'in_progress') this.recorder.record('call_started', {}, atMs);
    upsertSearchAttributes([{ key: CallStatusAttr, value: next }]);
    this.describe();
    return true;
  }

  fail(message: string, context: string): void {
    this.recorder.record('error', { message, context });
    this.moveTo('failed', 'error');
  }

  /**
   * LLM or gateway failures end the call as failed. So does anything unexpected: failing the
   * workflow task instead would retry it for ever, leaving the call open and its line off-hook.
   */
  failOn(err: unknown): void {
    if (err instanceof ContinueAsNew || isCancellation(err)) throw err;
    if (err instanceof LlmUnavailable) this.fail(err.message, 'llm');
    else if (err instanceof SpeechUnavailable) this.fail(err.message, 'tts');
    // Several waits may report one lost gateway (the media session, an armed turn): recorded once.
    else if (err instanceof GatewayLost) {
      if (!isFinal(this.status)) this.fail(err.message, 'gateway');
    } else this.fail(`internal error: ${err instanceof Error ? err.message : String(err)}`, 'workflow');
  }

  private onRecordRefused(reason: string, refusedEvents: number[]): void {
    this.recorder.record('error', { message: `could not record the call: ${reason}`, context: 'persistence', refused_events: refusedEvents });
    if (!isFinal(this.status)) this.moveTo('failed', 'error');
  }

  // ---- what is written and shown --------------------------------------------------------------

  /** The call record's fields as they are now. */
  patch(): CallRecordPatch {
    const answered = this.voicemail.answeredBy ? { answered_by: this.voicemail.answeredBy } : {};
    const summary = this.transferSummary ? { transfer_summary: this.transferSummary } : {};
    // A final status is written only by the final record, with its end_reason, end time and
    // duration at once: a flush between the end and that record (hanging up the line, closing the
    // media) showed `completed` with end_reason null, and clients take a final status as the end.
    const status = isFinal(this.status) ? {} : { status: this.status };
    return { ...status, start_time: this.startTimeMs, current_node_key: this.conv.nodeKey, ...this.totals, ...answered, ...summary };
  }

  turnResult(replies: string[]): TextTurnResult {
    return { replies, status: this.status, node_key: this.conv.nodeKey };
  }

  transcript() {
    return this.conv.history
      .filter((m) => (m.role === 'user' || m.role === 'assistant') && typeof m.content === 'string' && m.content)
      .map((m) => ({ role: m.role, text: m.content as string }));
  }

  /** What the Temporal UI shows for the call. */
  describe(): void {
    setCurrentDetails(
      `**${this.status}** · agent \`${this.input.agent.name}\` v${this.input.agent.version}` +
        (this.conv.nodeKey ? ` · node \`${this.conv.nodeKey}\`` : '') +
        ` · ${this.turns} turns`,
    );
  }
}
