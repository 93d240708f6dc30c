/**
 * One call's conversation state and behaviour: status transitions, greeting and pre-call tools,
 * flow-node progression, LLM turns with tool calls, idle timers. Message handlers only change
 * state; the main loop (run) owns timers and activities. Workflow code: deterministic, no I/O.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  ContinueAsNew,
  isCancellation,
  patched,
  proxyActivities,
  setCurrentDetails,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { CallStatus as CallStatusAttr } from '../src/shared/search-attributes';
import { callVariables, substitute, substituteDeep } from '../src/shared/template';
import {
  GATEWAY_HEARTBEAT_TIMEOUT_SECS,
  type ArmedTurnResult,
  type CallStatus,
  type CallWorkflowInput,
  type EndReason,
  type GatewayActivities,
  type GatewayEvent,
  type LlmTurnRequest,
  type MediaConnectedSignal,
  type SnapshotNode,
  type TelephonyStatusSignal,
  type TextTurnResult,
  type UsageTotals,
  type VoiceConfig,
} from './call-definitions';
import { CallRecorder } from './call-recorder';
import { GatewayLost, LlmUnavailable, SpeechUnavailable, TextChannel, VoiceChannel, type CallChannel, type Spoken, type Thought } from './channels';
import { canMove, isFinal } from './call-status';
import { hangUpProviderCall } from './provider-hangup';
import { TurnArming } from './turn-arming';
import {
  END_CALL,
  findNode,
  initialNode,
  offeredTools,
  stringify,
  systemMessages,
  toolArguments,
  toolResultText,
  trimHistory,
  wordCount,
  type ConversationState,
} from './conversation';

// A runaway tool loop must not keep the caller waiting forever.
const MAX_TOOL_ROUNDS_PER_TURN = 6;
// Enough context for the LLM to carry on naturally; the full transcript stays in PostgreSQL.
const HISTORY_KEPT_ON_CONTINUE = 60;
const IDLE_PROMPT =
  'The caller has been silent for a while. Briefly and politely ask whether they are still there. Do not call any tool.';
// A client-managed call (POST /api/calls/start) ends when the client says so; this only stops a
// call its client forgot from running for ever.
export const CLIENT_MANAGED_SAFETY_LIMIT_SECS = 24 * 3600;

export interface Utterance {
  id: number;
  text: string;
  duringAgentSpeech: boolean;
  /** The gateway's utterance number (voice calls). */
  seq?: number;
  /** An armed turn's reply, started by the gateway the moment the caller stopped. */
  prepared?: {
    thought: Thought | null;
    failure: { type: string; message: string } | null;
    utteranceId: string;
    request: LlmTurnRequest;
    /** When the gateway had the utterance: its reply's events come after. */
    atMs: number;
  };
}

export interface CallSummary {
  status: CallStatus;
  end_reason: EndReason | null;
  duration: number | null;
  totals: UsageTotals;
}

// How long a voice call may wait, once answered, for the provider's audio stream to connect.
const MEDIA_CONNECT_TIMEOUT = '30s';
// After endMedia the session reports within a heartbeat; don't hold the call's end for longer.
const MEDIA_CLOSE_WAIT = '5s';

export class CallSession {
  status: CallStatus;
  endReason: EndReason | null = null;
  startTimeMs: number | null;
  greeting: string | null = null;
  greetingDone = false;
  turns = 0;
  readonly queue: Utterance[] = [];
  readonly turnResults = new Map<number, TextTurnResult>();
  endRequest: EndReason | null = null;
  private utteranceIds = 0;
  private lastActivityMs: number;
  private idleWarned = false;
  private totals: UsageTotals;
  private readonly conv: ConversationState;
  private readonly recorder: CallRecorder;
  private channel: CallChannel | null = null;
  private gatewayTaskQueue: string | null;
  private recordingPath: string | null = null;
  private mediaClosed = false;
  private speechIds = 0;
  /** The agent's prompt with the call's variables as they were at call start. */
  private readonly prompt: string;
  /** POST /api/calls/start: the client drives the call; the agent only answers its messages. */
  private readonly clientManaged: boolean;
  /** The provider reported the call over (a terminal status): nothing to hang up. */
  private providerEnded = false;
  /** Voice calls: the next turn waits on the gateway (see turn-arming.ts); null on older runs. */
  private readonly arming: TurnArming | null;
  /** The prepared request of the armed turn, as the armed activity carries it. */
  private armedRequest: { request: LlmTurnRequest; utteranceId: string } | null = null;
  /** The last utterance number the gateway reported. */
  private lastUtteranceSeq: number;

  constructor(private readonly input: CallWorkflowInput) {
    const carried = input.carried;
    this.status = carried?.status ?? input.initialStatus;
    this.startTimeMs = carried?.startTimeMs ?? (input.initialStatus === 'in_progress' ? Date.now() : null);
    this.totals = carried?.totals ?? { llm_prompt_tokens: 0, llm_completion_tokens: 0, tts_characters: 0 };
    this.lastActivityMs = carried?.lastUserActivityMs ?? Date.now();
    const startVariables = callVariables(input.customParameters, input.agent.context_variables);
    this.prompt = substitute(input.agent.prompt, startVariables);
    // patched: client-managed calls that started before this change keep their idle timers on replay.
    this.clientManaged = input.channel === 'manual' && patched('client-managed-call-is-silent');
    this.conv = {
      nodeKey: carried?.nodeKey ?? null,
      variables: carried?.variables ?? startVariables,
      injectedContext: carried?.injectedContext ?? [],
      history: carried?.history ?? [],
    };
    this.lastUtteranceSeq = carried?.lastUtteranceSeq ?? 0;
    // patched: voice calls that started before armed turns keep the signal → voiceTurn path on replay.
    this.arming =
      input.channel === 'voice' && patched('armed-turns')
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
    else if (this.gatewayTaskQueue) this.channel = new VoiceChannel(input.callId, this.gatewayTaskQueue, input.options);
  }

  get voiceConfig(): VoiceConfig {
    const { agent } = this.input;
    return { agentName: agent.name, stt: agent.stt, tts: agent.tts, pipeline: agent.pipeline, greeting: this.plannedGreeting() };
  }

  /**
   * The greeting begin() will speak, with the id its `speak` will carry, while it has not started:
   * the gateway synthesises it the moment the stream connects instead of waiting for the request.
   */
  private plannedGreeting(): VoiceConfig['greeting'] {
    const { agent } = this.input;
    if (this.input.channel !== 'voice' || this.input.carried || this.greetingDone || this.speechIds > 0 || !agent.greeting) return null;
    if (this.clientManaged || isFinal(this.status) || this.endRequest !== null) return null;
    return { utteranceId: `u${this.speechIds + 1}`, text: substitute(agent.greeting, this.conv.variables) };
  }

  get nodeKey(): string | null {
    return this.conv.nodeKey;
  }

  // ---- message handlers: state changes only --------------------------------------------------

  enqueueUtterance(text: string, duringAgentSpeech = false, seq?: number, prepared?: Utterance['prepared']): number {
    const id = ++this.utteranceIds;
    const u: Utterance = { id, text, duringAgentSpeech, ...(seq !== undefined ? { seq } : {}), ...(prepared ? { prepared } : {}) };
    // In the order they were spoken: an armed turn's utterance may overtake a signal in flight.
    const later = seq === undefined ? -1 : this.queue.findIndex((q) => q.seq !== undefined && q.seq > seq);
    if (later < 0) this.queue.push(u);
    else this.queue.splice(later, 0, u);
    return id;
  }

  /** The gateway's number of an utterance it reported (signal or armed turn). */
  noteUtteranceSeq(seq: unknown): void {
    if (typeof seq === 'number' && Number.isFinite(seq) && seq > this.lastUtteranceSeq) this.lastUtteranceSeq = seq;
  }

  private onArmedResult(result: ArmedTurnResult): void {
    const armed = this.armedRequest;
    this.armedRequest = null;
    this.recordGatewayEvents(result.utterance ? result.utterance.events : undefined);
    this.recordGatewayEvents(result.events);
    const u = result.utterance;
    const ended = isFinal(this.status) || this.endRequest !== null;
    if (!u || ended || !armed || typeof u.text !== 'string' || !u.text.trim()) {
      // Nobody will answer it: whatever the gateway reported still goes into the call's events.
      this.recordGatewayEvents(result.thought?.events);
      if (u) this.noteUtteranceSeq(u.seq);
      return;
    }
    this.noteUtteranceSeq(u.seq);
    const atMs = Number.isFinite(u.timestampMs) ? u.timestampMs : Date.now();
    const prepared = result.thought || result.failure ? { thought: result.thought, failure: result.failure, ...armed, atMs } : undefined;
    this.enqueueUtterance(u.text.trim(), u.duringAgentSpeech === true, u.seq, prepared);
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
    this.channel = new VoiceChannel(this.input.callId, signal.gatewayTaskQueue, this.input.options);
    this.recorder.record('call_status', { status: 'media_connected', source: 'gateway', stream_sid: signal.streamSid });
    if (this.status === 'ringing') this.moveTo('in_progress');
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

  // ---- main loop -----------------------------------------------------------------------------

  async run(): Promise<CallSummary> {
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

  private armNextTurn(): void {
    const request = this.llmRequest();
    const utteranceId = this.nextSpeechId();
    this.armedRequest = { request, utteranceId };
    this.arming!.arm(request, utteranceId, this.lastUtteranceSeq);
  }

  /**
   * LLM or gateway failures end the call as failed. So does anything unexpected: failing the
   * workflow task instead would retry it for ever, leaving the call open and its line off-hook.
   */
  private failOn(err: unknown): void {
    if (err instanceof ContinueAsNew || isCancellation(err)) throw err;
    if (err instanceof LlmUnavailable) this.fail(err.message, 'llm');
    else if (err instanceof SpeechUnavailable) this.fail(err.message, 'tts');
    else if (err instanceof GatewayLost) this.fail(err.message, 'gateway');
    else this.fail(`internal error: ${err instanceof Error ? err.message : String(err)}`, 'workflow');
  }

  /** PostgreSQL refused a write of this call (retrying cannot fix that): the call ends failed. */
  private onRecordRefused(reason: string, refusedEvents: number[]): void {
    this.recorder.record('error', { message: `could not record the call: ${reason}`, context: 'persistence', refused_events: refusedEvents });
    if (!isFinal(this.status)) this.moveTo('failed', 'error');
  }

  /**
   * Voice calls: wait for the audio stream, then hold a heartbeating media session on the gateway
   * for the rest of the call; when it ends the caller hung up, when it fails the gateway is gone.
   */
  private async connectMedia(): Promise<void> {
    if (isFinal(this.status) || this.endRequest !== null) return;
    const connected = await condition(() => this.gatewayTaskQueue !== null || this.endRequest !== null || isFinal(this.status), MEDIA_CONNECT_TIMEOUT);
    if (!connected) return this.fail('the audio stream never connected to a media gateway', 'gateway');
    if (this.gatewayTaskQueue === null) return;
    if (this.recordingPath) void this.recorder.flush({ recording_path: this.recordingPath });
    const { mediaSession } = proxyActivities<GatewayActivities>({
      taskQueue: this.gatewayTaskQueue,
      scheduleToStartTimeout: '5s',
      startToCloseTimeout: '24h',
      heartbeatTimeout: GATEWAY_HEARTBEAT_TIMEOUT_SECS * 1000,
      retry: { maximumAttempts: 1 },
    });
    mediaSession({ callId: this.input.callId }).then(
      (result) => {
        this.mediaClosed = true;
        this.recordGatewayEvents(result.events);
        if (result.reason === 'hangup') this.requestEnd('user_ended');
      },
      (err: Error) => {
        this.mediaClosed = true;
        if (!isFinal(this.status)) this.fail(`media gateway lost: ${(err.cause as Error | undefined)?.message ?? err.message}`, 'gateway');
      },
    );
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
        await this.agentSays(this.greeting);
      }
      await Promise.all(preCall);
      const first = initialNode(agent);
      if (first) await this.enterNode(first, null, { silent: this.clientManaged });
    } catch (err) {
      this.failOn(err);
    }
    this.greetingDone = true;
    this.lastActivityMs = Date.now();
    await this.recorder.flush(this.patch());
  }

  private async onUtterance(u: Utterance): Promise<void> {
    this.noteUtteranceSeq(u.seq);
    const backchannel = u.duringAgentSpeech && wordCount(u.text) < this.input.agent.pipeline.min_words;
    // An armed turn's reply already played: the caller spoke before its events, so at the gateway's time.
    this.recorder.record('user_spoke', { text: u.text, ...(backchannel ? { backchannel: true } : {}) }, u.prepared ? u.prepared.atMs : Date.now());
    if (backchannel) {
      this.turnResults.set(u.id, this.turnResult([]));
      return;
    }
    this.idleWarned = false;
    this.conv.history.push({ role: 'user', content: u.text });
    const replies = await this.agentTurn(undefined, u.prepared);
    this.turns++;
    this.turnResults.set(u.id, this.turnResult(replies));
    this.lastActivityMs = Date.now();
    void this.recorder.flush(this.patch());
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

  // ---- agent turns ---------------------------------------------------------------------------

  /** LLM rounds until the agent answers without calling tools (or ends the call). */
  private async agentTurn(transientInstruction?: string, prepared?: Utterance['prepared']): Promise<string[]> {
    const replies: string[] = [];
    for (let round = 0; round < MAX_TOOL_ROUNDS_PER_TURN && this.endRequest === null; round++) {
      const result = round === 0 && prepared ? await this.preparedLlm(prepared) : await this.callLlm(transientInstruction);
      // What the caller actually heard: on barge-in, only the part played before they spoke.
      const said = result.heardText;
      if (said) {
        replies.push(said);
        this.recorder.record('agent_spoke', { text: said, ...(result.interrupted ? { interrupted: true } : {}) });
      }
      // Tool calls of a reply the caller cut off are dropped: they answered what was not heard.
      const toolCalls = result.interrupted ? [] : result.toolCalls;
      // An assistant message needs text or tool calls (a reply cut off before any audio has neither).
      if (said || toolCalls.length) {
        this.conv.history.push({
          role: 'assistant',
          content: said || null,
          ...(toolCalls.length
            ? {
                tool_calls: toolCalls.map((tc) => ({
                  id: tc.id,
                  type: 'function' as const,
                  function: { name: tc.name, arguments: JSON.stringify(tc.arguments) },
                })),
              }
            : {}),
        });
      }
      if (!toolCalls.length) break;
      for (const call of toolCalls) {
        const output = await this.handleToolCall(call, replies);
        this.conv.history.push({ role: 'tool', tool_call_id: call.id, content: output });
      }
    }
    return replies;
  }

  /** The LLM request of the current state (the caller's words, if any, already in the history). */
  private llmRequest(transientInstruction?: string): LlmTurnRequest {
    const { agent, customParameters, callId } = this.input;
    const messages = [...systemMessages(this.prompt, agent, this.conv, customParameters), ...this.conv.history];
    if (transientInstruction) messages.push({ role: 'system', content: transientInstruction });
    return {
      callId,
      provider: agent.llm_provider,
      model: agent.llm_model,
      temperature: agent.llm_settings.temperature,
      maxTokens: agent.llm_settings.max_tokens,
      messages,
      tools: transientInstruction ? [] : offeredTools(agent, this.conv),
    };
  }

  private async callLlm(transientInstruction?: string): Promise<Thought> {
    const result = await this.requireChannel().think(this.llmRequest(transientInstruction), this.nextSpeechId());
    return this.countThought(result);
  }

  /** The reply the gateway started for an armed turn (or the retries of its failed LLM request). */
  private async preparedLlm(prepared: NonNullable<Utterance['prepared']>): Promise<Thought> {
    if (prepared.thought) return this.countThought(prepared.thought);
    const channel = this.requireChannel();
    if (!(channel instanceof VoiceChannel)) throw new GatewayLost('no media gateway holds this call');
    const request = { ...prepared.request, messages: this.llmRequest().messages };
    return this.countThought(await channel.retryArmed(request, this.nextSpeechId(), prepared.failure!));
  }

  private countThought(result: Thought): Thought {
    const { agent } = this.input;
    this.countSpeech(result);
    this.totals.llm_prompt_tokens += result.usage.prompt_tokens;
    this.totals.llm_completion_tokens += result.usage.completion_tokens;
    this.recorder.record('llm_usage', { ...result.usage, model: agent.llm_model });
    if (result.ttfbMs !== null) this.recorder.record('ttfb_metric', { processor: 'llm', ms: result.ttfbMs });
    return result;
  }

  /** Runs one tool call of the LLM; returns the text the LLM gets back. */
  private async handleToolCall(call: Thought['toolCalls'][number], replies: string[]): Promise<string> {
    const { agent } = this.input;
    this.recorder.record('tool_called', { function: call.name, args: call.arguments });
    if (call.name === END_CALL) {
      this.recorder.record('tool_result', { function: call.name, result: 'ok' });
      this.requestEnd('agent_ended');
      return 'ok';
    }
    const node = findNode(agent, this.conv.nodeKey);
    const fn = node?.functions.find((f) => f.name === call.name);
    if (fn) {
      Object.assign(this.conv.variables, call.arguments);
      const next = fn.next_node_key ? findNode(agent, fn.next_node_key) : undefined;
      this.recorder.record('tool_result', { function: call.name, result: next ? `moved to ${next.node_key}` : 'recorded' });
      if (next) replies.push(...(await this.enterNode(next, fn.name)));
      return next ? `ok, moved to ${next.node_key}` : 'ok';
    }
    const tool = agent.tools.find((t) => t.name === call.name);
    if (!tool) {
      const message = `unknown function ${call.name}`;
      this.recorder.record('tool_result', { function: call.name, result: null, error: message });
      return `Error: ${message}.`;
    }
    const outcome = await this.runTool(tool.id, toolArguments(call.arguments, this.input.customParameters, this.input), call.id);
    return toolResultText(outcome);
  }

  private async runTool(toolId: string, args: Record<string, unknown>, toolCallId: string) {
    const tool = this.input.agent.tools.find((t) => t.id === toolId)!;
    const { callTool } = proxyActivities<Activities>({
      // The webhook's own timeout plus room for the request to start; a crashed worker is noticed
      // by the heartbeat long before that and the call is retried with the same Idempotency-Key.
      startToCloseTimeout: `${tool.timeout_secs + 5}s`,
      heartbeatTimeout: '3s',
      retry: { initialInterval: '500ms', maximumAttempts: 3 },
    });
    let outcome;
    try {
      outcome = await callTool({ callId: this.input.callId, toolCallId, tool, args });
    } catch (err) {
      outcome = { status_code: null, response: null, duration_ms: 0, error: `tool activity failed: ${(err as Error).message}` };
    }
    this.recorder.record('tool_result', {
      function: tool.name,
      result: outcome.response,
      status_code: outcome.status_code,
      duration_ms: outcome.duration_ms,
      error: outcome.error,
    });
    return outcome;
  }

  /** Pre-call tools and call_tool pre-actions: the result becomes context for the LLM. */
  private async runToolForContext(toolId: string, args: Record<string, unknown>, source: string): Promise<void> {
    const tool = this.input.agent.tools.find((t) => t.id === toolId);
    if (!tool) return;
    this.recorder.record('tool_called', { function: tool.name, args, source });
    const full = toolArguments(args, this.input.customParameters, this.input);
    const outcome = await this.runTool(toolId, full, `${source}-${tool.name}-${this.recorder.nextSeq}`);
    const text = outcome.error ? `unavailable (${outcome.error})` : stringify(outcome.response);
    this.conv.injectedContext.push(`Context from ${tool.name}: ${text}`);
    this.recorder.record('context_injected', { source, tool: tool.name, content: text });
  }

  /**
   * Enters a flow node: events, variable substitution (at use), pre-actions. Returns said texts;
   * `silent` skips the `say` pre-actions (nobody asked the agent anything yet).
   */
  private async enterNode(node: SnapshotNode, viaFunction: string | null, options: { silent?: boolean } = {}): Promise<string[]> {
    const from = this.conv.nodeKey;
    if (from !== null) this.recorder.record('node_transition', { from, to: node.node_key, function: viaFunction });
    this.conv.nodeKey = node.node_key;
    this.recorder.record('node_entered', { node_key: node.node_key });
    this.describe();
    const said: string[] = [];
    for (const action of node.pre_actions) {
      if (action.type === 'say') {
        if (options.silent) continue;
        const heard = await this.agentSays(substitute(action.text, this.conv.variables));
        if (heard) said.push(heard);
      } else if (action.type === 'call_tool') {
        const args = substituteDeep(action.args ?? {}, this.conv.variables) as Record<string, unknown>;
        await this.runToolForContext(action.tool_id, args, `pre_action:${node.node_key}`);
      } else if (action.type === 'end_call') {
        this.requestEnd('agent_ended');
      }
    }
    return said;
  }

  /** The agent speaks a fixed text (greeting, `say` pre-action); returns what the caller heard. */
  private async agentSays(text: string): Promise<string> {
    const spoken = await this.requireChannel().say(text, this.nextSpeechId());
    this.countSpeech(spoken);
    if (spoken.heardText) {
      this.recorder.record('agent_spoke', { text: spoken.heardText, ...(spoken.interrupted ? { interrupted: true } : {}) });
      this.conv.history.push({ role: 'assistant', content: spoken.heardText });
    }
    return spoken.heardText;
  }

  private countSpeech(spoken: Spoken): void {
    this.totals.tts_characters += spoken.characters;
    this.recordGatewayEvents(spoken.events);
  }

  private nextSpeechId(): string {
    return `u${++this.speechIds}`;
  }

  private requireChannel(): CallChannel {
    if (!this.channel) throw new GatewayLost('no media gateway holds this call');
    return this.channel;
  }

  // ---- status ----------------------------------------------------------------------------------

  private moveTo(next: CallStatus, reason?: EndReason): boolean {
    const from = this.status;
    if (!canMove(from, next)) {
      this.recorder.record('call_status', { status: next, from, ignored: true });
      return false;
    }
    this.status = next;
    if (next === 'in_progress') this.startTimeMs = Date.now();
    if (reason) this.endReason = reason;
    this.recorder.record('call_status', { status: next, from });
    if (next === 'in_progress') this.recorder.record('call_started', {});
    upsertSearchAttributes([{ key: CallStatusAttr, value: next }]);
    this.describe();
    return true;
  }

  private fail(message: string, context: string): void {
    this.recorder.record('error', { message, context });
    this.moveTo('failed', 'error');
  }

  private async finish(): Promise<CallSummary> {
    if (!isFinal(this.status)) {
      const reason = this.endRequest ?? 'user_ended';
      this.moveTo('completed', reason);
    }
    await this.closeMedia();
    if (this.input.channel === 'voice' && !this.providerEnded) await hangUpProviderCall(this.input.callId);
    const endMs = Date.now();
    const duration = this.startTimeMs === null ? null : Math.max(0, (endMs - this.startTimeMs) / 1000);
    this.recorder.record('call_ended', {
      status: this.status,
      end_reason: this.endReason,
      duration,
      transcript: this.transcript(),
      usage: this.totals,
      context: this.input.customParameters,
    });
    await this.recorder.flush({ ...this.patch(), end_time: endMs, duration, end_reason: this.endReason });
    await this.recorder.settle({ status: this.status, end_time: endMs, duration, end_reason: this.endReason });
    await this.recorder.drain();
    await condition(allHandlersFinished);
    return { status: this.status, end_reason: this.endReason, duration, totals: this.totals };
  }

  /** Voice calls: let the goodbye play, then close the provider stream (which hangs up). */
  private async closeMedia(): Promise<void> {
    if (this.gatewayTaskQueue === null || this.mediaClosed) return;
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

  // ---- helpers -------------------------------------------------------------------------------

  private patch() {
    return { status: this.status, start_time: this.startTimeMs, current_node_key: this.conv.nodeKey, ...this.totals };
  }

  private turnResult(replies: string[]): TextTurnResult {
    return { replies, status: this.status, node_key: this.conv.nodeKey };
  }

  private transcript() {
    return this.conv.history
      .filter((m) => (m.role === 'user' || m.role === 'assistant') && typeof m.content === 'string' && m.content)
      .map((m) => ({ role: m.role, text: m.content as string }));
  }

  private describe(): void {
    setCurrentDetails(
      `**${this.status}** · agent \`${this.input.agent.name}\` v${this.input.agent.version}` +
        (this.conv.nodeKey ? ` · node \`${this.conv.nodeKey}\`` : '') +
        ` · ${this.turns} turns`,
    );
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
