/**
 * One call's state and the messages that change it: status transitions, the conversation (node,
 * variables, LLM history), totals, gateway events, the channel the agent speaks through. Handlers
 * only change state; agent-turns.ts and call-session.ts build the behaviour on top. Workflow code:
 * deterministic, no I/O.
 */
import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { CallStatus as CallStatusAttr } from '../src/shared/search-attributes';
import { callVariables, substitute } from '../src/shared/template';
import {
  type ArmedTurnResult,
  type CallStatus,
  type CallWorkflowInput,
  type EndReason,
  type GatewayEvent,
  type GatewayLostSignal,
  type LlmTurnRequest,
  type MediaConnectedSignal,
  type RunTurn,
  type TelephonyStatusSignal,
  type TextTurnResult,
  type UsageTotals,
  type UtteranceSignal,
  type VoiceConfig,
} from './call-definitions';
import { CallRecorder } from './call-recorder';
import { GatewayLost, TextChannel, VoiceChannel, type CallChannel, type Spoken } from './channels';
import { canMove, isFinal } from './call-status';
import { TurnArming } from './turn-arming';
import { detectsVoicemail, voiceSetup } from './voice-setup';
import type { AnsweredByVerdict } from '../src/voicemail/settings';
import { CallVoicemail } from './call-voicemail';
import type { ConversationState } from './conversation';
import { answeredAt, type ArmedTurn, type Utterance } from './utterance';

// Enough to recognise any report an outbox could deliver twice (it redelivers only its head).
const RECENT_SEQS_KEPT = 64;

export interface CallSummary {
  status: CallStatus;
  end_reason: EndReason | null;
  duration: number | null;
  totals: UsageTotals;
}

export abstract class CallState {
  status: CallStatus;
  endReason: EndReason | null = null;
  startTimeMs: number | null;
  greeting: string | null = null;
  greetingDone = false;
  turns = 0;
  readonly queue: Utterance[] = [];
  readonly turnResults = new Map<number, TextTurnResult>();
  endRequest: EndReason | null = null;
  protected utteranceIds = 0;
  protected lastActivityMs: number;
  protected idleWarned = false;
  protected totals: UsageTotals;
  protected readonly conv: ConversationState;
  protected readonly recorder: CallRecorder;
  protected channel: CallChannel | null = null;
  protected gatewayTaskQueue: string | null;
  protected recordingPath: string | null = null;
  protected mediaClosed = false;
  protected speechIds = 0;
  /** The agent's prompt with the call's variables as they were at call start. */
  protected readonly prompt: string;
  /** POST /api/calls/start: the client drives the call; the agent only answers its messages. */
  protected readonly clientManaged: boolean;
  /** The provider reported the call over (a terminal status): nothing to hang up. */
  protected providerEnded = false;
  /** Voice calls: the next turn waits on the gateway (see turn-arming.ts); null on text calls. */
  protected readonly arming: TurnArming | null;
  /** The prepared request of the armed turn, as the armed activity carries it. */
  protected armedRequest: { request: LlmTurnRequest; utteranceId: string } | null = null;
  /** The last utterance number the gateway reported. */
  protected lastUtteranceSeq: number;
  /** The gateway the watchdog reported lost, until the probe has answered. */
  protected gatewaySuspect: GatewayLostSignal | null = null;
  /** Who answered, on outbound calls that detect voicemail (call-voicemail.ts). */
  protected readonly voicemail: CallVoicemail;
  /** Utterance numbers received lately: a report the gateway's outbox delivered twice counts once. */
  private readonly recentSeqs: number[] = [];

  constructor(protected readonly input: CallWorkflowInput) {
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
    this.lastUtteranceSeq = carried?.lastUtteranceSeq ?? 0;
    this.voicemail = new CallVoicemail(detectsVoicemail(input) ? input.agent.voicemail!.action : null);
    this.arming =
      input.channel === 'voice'
        ? new TurnArming(
            () => (this.channel instanceof VoiceChannel ? this.channel : null),
            (result) => this.onArmedResult(result),
          )
        : null;
    this.recorder = new CallRecorder(input, carried?.nextSeq ?? 1, carried?.unwrittenEvents);
    this.recorder.onRefused = (reason, seqs) => this.onRecordRefused(reason, seqs);
    if (carried) this.greetingDone = true;
    this.gatewayTaskQueue = carried?.gatewayTaskQueue ?? input.gatewayTaskQueue ?? null;
    if (input.channel !== 'voice') this.channel = new TextChannel(input.options);
    else if (this.gatewayTaskQueue) this.channel = this.voiceChannel(this.gatewayTaskQueue);
  }

  get voiceConfig(): VoiceConfig {
    return { ...voiceSetup(this.input), greeting: this.plannedGreeting() };
  }

  /**
   * The greeting begin() will speak, with the id its `speak` will carry, while it has not started:
   * the gateway synthesises it the moment the stream connects instead of waiting for the request.
   */
  protected plannedGreeting(): VoiceConfig['greeting'] {
    const { agent } = this.input;
    if (this.input.channel !== 'voice' || this.input.carried || this.greetingDone || this.speechIds > 0 || !agent.greeting) return null;
    if (this.clientManaged || isFinal(this.status) || this.endRequest !== null) return null;
    return { utteranceId: `u${this.speechIds + 1}`, text: substitute(agent.greeting, this.conv.variables) };
  }

  get nodeKey(): string | null {
    return this.conv.nodeKey;
  }

  // ---- message handlers: state changes only --------------------------------------------------

  enqueueUtterance(text: string, duringAgentSpeech = false, seq?: number, prepared?: Utterance['prepared'], events?: GatewayEvent[]): number {
    const id = ++this.utteranceIds;
    const u: Utterance = { id, text, duringAgentSpeech, ...(seq !== undefined ? { seq } : {}), ...(prepared ? { prepared } : {}), ...(events?.length ? { events } : {}) };
    // In the order they were spoken: an armed turn's utterance may overtake a signal in flight.
    const later = seq === undefined ? -1 : this.queue.findIndex((q) => q.seq !== undefined && q.seq > seq);
    if (later < 0) this.queue.push(u);
    else this.queue.splice(later, 0, u);
    return id;
  }

  /** A turn a run answered, as the queue holds it (read back from a lost gateway's journal). */
  protected runTurnUtterance(t: RunTurn): Utterance {
    const { utterance: u, thought, answeredAtMs } = t;
    const prepared = { thought, failure: null, atMs: u.timestampMs, ...answeredAt(answeredAtMs) };
    return { id: ++this.utteranceIds, text: u.text.trim(), duringAgentSpeech: u.duringAgentSpeech === true, seq: u.seq, prepared, ...(u.events?.length ? { events: u.events } : {}) };
  }

  /** The gateway's number of an utterance it reported (signal or armed turn). */
  noteUtteranceSeq(seq: unknown): void {
    if (typeof seq === 'number' && Number.isFinite(seq) && seq > this.lastUtteranceSeq) this.lastUtteranceSeq = seq;
    if (typeof seq === 'number') {
      this.recentSeqs.push(seq);
      if (this.recentSeqs.length > RECENT_SEQS_KEPT) this.recentSeqs.shift();
    }
  }

  /** A report of an utterance this run already has (delivered again after a lost acknowledgement). */
  isRepeatedUtterance(seq: unknown): boolean {
    return typeof seq === 'number' && this.recentSeqs.includes(seq);
  }

  /**
   * A reply the gateway gave alone while Temporal was away (`utterance.reply`): handled like an
   * armed turn's, recorded at the gateway's time.
   */
  replyOf(signal: UtteranceSignal): Utterance['prepared'] {
    const reply = signal.reply;
    if (!reply || typeof reply.heardText !== 'string') return undefined;
    const atMs = Number.isFinite(signal.timestampMs) ? signal.timestampMs! : Date.now();
    return { thought: reply, failure: null, atMs };
  }

  protected onArmedResult(result: ArmedTurnResult): void {
    const armed = this.armedRequest;
    this.armedRequest = null;
    // A turn run's turns came first, each as if reported alone; only the first used the armed plan.
    const turns: ArmedTurn[] = [...(result.earlier ?? []).map((t) => ({ ...t, failure: null })), result];
    turns.forEach((turn, i) => this.onArmedTurn(turn, i === 0 ? armed : 'run', i === turns.length - 1 ? result.events : undefined));
  }

  /**
   * One turn of an armed activity's result. `armed`: the workflow's plan it used, or `run` for a
   * run's later turn (the gateway's plan); `events`: the result's own, after the utterance's.
   */
  private onArmedTurn(result: ArmedTurn, armed: CallState['armedRequest'] | 'run', events: ArmedTurnResult['events'] | undefined): void {
    const u = result.utterance;
    // A run's later turn: its events go in with it, after the turns before it.
    const deferred = armed === 'run' && u && !isFinal(this.status) ? u.events : undefined;
    if (!deferred) this.recordGatewayEvents(u ? u.events : undefined);
    this.recordGatewayEvents(events);
    // A reply the gateway already spoke belongs to the call even if the hang-up was processed
    // first (its result can arrive after the hang-up's): recorded, not dropped.
    const spoken = result.thought !== null && this.endRequest !== null && !isFinal(this.status);
    const ended = isFinal(this.status) || (this.endRequest !== null && !spoken);
    if (!u || ended || !armed || typeof u.text !== 'string' || !u.text.trim()) {
      // Nobody will answer it: whatever the gateway reported still goes into the call's events.
      this.recordGatewayEvents(deferred);
      this.recordGatewayEvents(result.thought?.events);
      if (u) this.noteUtteranceSeq(u.seq);
      return;
    }
    this.noteUtteranceSeq(u.seq);
    const atMs = Number.isFinite(u.timestampMs) ? u.timestampMs : Date.now();
    const prepared = result.thought || result.failure ? { thought: result.thought, failure: result.failure, ...(armed === 'run' ? {} : armed), atMs, ...answeredAt(result.answeredAtMs) } : undefined;
    this.enqueueUtterance(u.text.trim(), u.duringAgentSpeech === true, u.seq, prepared, deferred);
  }

  requestEnd(reason: EndReason): void {
    this.endRequest ??= reason;
  }

  /** The provider's audio stream reached a media gateway: the call is answered. */
  onMediaConnected(signal: MediaConnectedSignal): void {
    if (isFinal(this.status) || this.gatewayTaskQueue !== null) return;
    this.recordGatewayEvents(signal.events);
    this.gatewayTaskQueue = signal.gatewayTaskQueue;
    this.recordingPath = signal.recordingPath;
    this.channel = this.voiceChannel(signal.gatewayTaskQueue);
    // At the gateway's time: the greeting may already be playing (its events come later, earlier dated).
    const reported = (signal.events ?? []).map((e) => e?.timestampMs).filter((t): t is number => Number.isFinite(t));
    const at = Number.isFinite(signal.connectedAtMs) ? Math.min(Date.now(), Math.max(signal.connectedAtMs!, ...reported)) : Date.now();
    this.recorder.record('call_status', { status: 'media_connected', source: 'gateway', stream_sid: signal.streamSid }, at);
    if (this.status === 'ringing') this.moveTo('in_progress', undefined, at);
  }

  /** A verdict on who answered (call-voicemail.ts); the machine verdict is recorded. */
  onAnsweredBy(verdict: AnsweredByVerdict): void {
    if (isFinal(this.status)) return;
    const detected = this.voicemail.verdict(verdict);
    if (detected) this.recorder.record('voicemail_detected', detected);
  }

  /** The watchdog says the call's gateway has no presence: the session probes it. */
  onGatewayLost(signal: GatewayLostSignal): void {
    if (typeof signal?.gatewayTaskQueue !== 'string') throw new TypeError('gatewayTaskQueue is not a string');
    if (isFinal(this.status) || signal.gatewayTaskQueue !== this.gatewayTaskQueue) return;
    this.gatewaySuspect ??= { gatewayTaskQueue: signal.gatewayTaskQueue, reason: String(signal.reason ?? 'no presence') };
  }

  protected voiceChannel(taskQueue: string): VoiceChannel {
    return new VoiceChannel(this.input.callId, taskQueue, this.input.options);
  }

  /** A message the workflow could not handle: recorded, and the call goes on without it. */
  ignoredMessage(name: string, err: unknown): void {
    this.recorder.record('error', { message: `ignored a malformed ${name} message: ${err instanceof Error ? err.message : String(err)}`, context: 'workflow' });
  }

  recordGatewayEvents(events: GatewayEvent[] | undefined): void {
    for (const e of events ?? []) {
      if (typeof e?.type !== 'string') continue; // not an event: nothing to record
      this.recorder.record(e.type, e.data ?? {}, Number.isFinite(e.timestampMs) ? e.timestampMs : Date.now());
    }
  }

  onTelephonyStatus(signal: TelephonyStatusSignal): void {
    this.recorder.record('call_status', { status: signal.status, source: 'provider', ...(signal.detail ?? {}) });
    if (signal.status !== 'ringing' && signal.status !== 'answered') this.providerEnded = true;
    switch (signal.status) {
      case 'answered':
        this.moveTo('in_progress');
        break;
      case 'busy':
      case 'no_answer':
      case 'canceled':
        if (this.status === 'ringing') this.moveTo('no_answer');
        else this.requestEnd('user_ended');
        break;
      case 'completed':
        if (this.status === 'ringing') this.moveTo('no_answer');
        else this.requestEnd('user_ended');
        break;
      case 'failed': {
        const detail = signal.detail ?? {};
        const reason = detail.error ?? detail.message;
        this.fail(reason ? `telephony provider: ${String(reason)}` : 'telephony provider reported the call failed', 'telephony');
        break;
      }
      case 'ringing':
        break;
    }
  }

  protected onRecordRefused(reason: string, refusedEvents: number[]): void {
    this.recorder.record('error', { message: `could not record the call: ${reason}`, context: 'persistence', refused_events: refusedEvents });
    if (!isFinal(this.status)) this.moveTo('failed', 'error');
  }

  /**
   * Voice calls: wait for the audio stream, then hold a heartbeating media session on the gateway
   * for the rest of the call; when it ends the caller hung up, when it fails the gateway is gone.
   */

  protected countSpeech(spoken: Spoken): void {
    this.totals.tts_characters += spoken.characters;
    this.recordGatewayEvents(spoken.events);
  }

  protected nextSpeechId(): string {
    return `u${++this.speechIds}`;
  }

  /** The id nextSpeechId() gave last. */
  protected lastSpeechId(): string {
    return `u${this.speechIds}`;
  }

  protected requireChannel(): CallChannel {
    if (!this.channel) throw new GatewayLost('no media gateway holds this call');
    return this.channel;
  }

  // ---- status ----------------------------------------------------------------------------------

  protected moveTo(next: CallStatus, reason?: EndReason, atMs = Date.now()): boolean {
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

  protected fail(message: string, context: string): void {
    this.recorder.record('error', { message, context });
    this.moveTo('failed', 'error');
  }

  // ---- helpers -------------------------------------------------------------------------------

  protected patch() {
    const answered = this.voicemail.answeredBy ? { answered_by: this.voicemail.answeredBy } : {};
    return { status: this.status, start_time: this.startTimeMs, current_node_key: this.conv.nodeKey, ...this.totals, ...answered };
  }

  protected turnResult(replies: string[]): TextTurnResult {
    return { replies, status: this.status, node_key: this.conv.nodeKey };
  }

  protected transcript() {
    return this.conv.history
      .filter((m) => (m.role === 'user' || m.role === 'assistant') && typeof m.content === 'string' && m.content)
      .map((m) => ({ role: m.role, text: m.content as string }));
  }

  protected describe(): void {
    setCurrentDetails(
      `**${this.status}** · agent \`${this.input.agent.name}\` v${this.input.agent.version}` +
        (this.conv.nodeKey ? ` · node \`${this.conv.nodeKey}\`` : '') +
        ` · ${this.turns} turns`,
    );
  }

}
