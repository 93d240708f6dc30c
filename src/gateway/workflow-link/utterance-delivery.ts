/**
 * How a call's caller utterances reach the call workflow. Each is numbered (1, 2, … per call).
 *
 * - When the workflow has armed the next turn (`armedTurn`: the LLM request minus the caller's
 *   words, see workflows/turn-arming.ts), the utterance completes that activity and, unless it is
 *   a backchannel candidate or the plan is stale, the LLM starts at once with the utterance
 *   appended: no workflow round trip before the reply.
 * - Otherwise (no turn ready: during a tool call, the greeting, a workflow of an older version) it
 *   is reported to the workflow (workflow-reports.ts), which answers it itself.
 *
 * A plan is stale when the workflow had not yet received every earlier utterance (a signal in
 * flight): the utterance is then returned without a reply and the workflow answers it itself.
 *
 * Calls started since turn runs arm with `carryOn` (ArmedTurnRequest): after a plain reply the
 * armed turn arms itself again with the next plan — the workflow's request plus the caller's
 * words and the reply they heard — and reports its turns together when the run ends, so a call's
 * plain turns cost the workflow one task per run.
 *
 * While Temporal is unreachable (the call's outbox is stalled) an utterance nothing is armed for
 * is answered by the gateway from what it knows of the conversation (conversation-mirror.ts), and
 * reported with its reply: the workflow records it when Temporal is back (docs/call-lifecycle.md).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ArmedTurnRequest, ArmedTurnResult, RunTurn, UtteranceSignal, VoiceTurnRequest, VoiceTurnResult } from '../../../workflows/call-definitions';
import { isBackchannel, type TurnPolicy } from '../../shared/turn-policy';
import { countTurnPath, type TurnPath } from '../../observability/metrics';
import { epochMs } from './events';
import { SpeechUnavailable } from '../speech/tts-link';
import type { ConversationMirror } from '../turns/conversation-mirror';
import type { CompletedTurn } from '../turns/turn-detector';
import type { ReportedUtterance, WorkflowReports } from './workflow-reports';

/** Runs an LLM turn into speech (voice-turn.ts), cancelled with `cancel`. */
export type TurnRunner = (req: VoiceTurnRequest, cancel: AbortSignal) => Promise<VoiceTurnResult>;

interface Armed {
  /** The plan: the workflow's, or the next one of its turn run. */
  req: ArmedTurnRequest;
  cancel: AbortSignal;
  run: TurnRunner;
  resolve(result: ArmedTurnResult): void;
  /** A turn run's answered turns, not reported yet. */
  turns: RunTurn[];
  /** When the run reports at the latest (performance.now()): the workflow's idle deadline, or `withinMs` after its first turn. */
  reportAt: number;
  timer: NodeJS.Timeout | null;
  /** Disarmed while one of its turns was running: it reports when that turn ends. */
  stopped: boolean;
}

/** A run reports this long before the workflow's idle deadline, so the idle timer never has to disarm it. */
const IDLE_MARGIN_MS = 1000;

export interface DeliveryOptions {
  /** What the gateway knows of the conversation (replies given alone while Temporal is away). */
  conversation?: Pick<ConversationMirror, 'planned' | 'heard' | 'requestFor'>;
  /** Runs a reply the gateway decided alone (LLM into speech, like an armed turn's). */
  answerAlone?: (req: VoiceTurnRequest) => Promise<VoiceTurnResult>;
  /** Whether an agent utterance has finished playing whole (a plan's `afterSpeech`). Default: never. */
  heardWhole?: (utteranceId: string) => boolean;
  /** Whether a run may carry on now: only under load, where the workflow tasks it saves matter. Default: always. */
  runsTurns?: () => boolean;
  /** Keeps a turn a run holds unreported where a dead gateway does not lose it (run-journal.ts); rejects if it could not. */
  journal?: (turn: RunTurn) => Promise<void>;
  /** The call's turn policy (its language and phrases), as the workflow applies it; default: min_words alone over every language's phrases. */
  policy?: TurnPolicy;
}

/** Arm ids remembered (disarmed early, or taken): a call has at most one or two in flight. */
const RECENT_ARM_IDS = 16;

/** An armed plan and the caller's words: the turn's LLM request. */
function requestOf(armed: ArmedTurnRequest, text: string): VoiceTurnRequest {
  const { armId: _armId, afterSeq: _afterSeq, afterSpeech: _afterSpeech, carryOn: _carryOn, releasedWithMedia: _released, ...plan } = armed;
  return { ...plan, messages: [...plan.messages, { role: 'user', content: text.trim() }] };
}

const nothing = (): ArmedTurnResult => ({ utterance: null, thought: null, failure: null, events: [] });

/** The error type the voiceTurn activity would have failed with. */
function failureOf(err: unknown): { type: string; message: string } {
  if (err instanceof SpeechUnavailable) return { type: 'SpeechUnavailable', message: err.message };
  if (err instanceof ApplicationFailure) return { type: err.type ?? 'LlmUnavailable', message: err.message };
  return { type: 'LlmUnavailable', message: err instanceof Error ? err.message : String(err) };
}

export class UtteranceDelivery {
  private seq = 0;
  /** Arm ids disarmed before their armedTurn arrived (see disarm), and arm ids an utterance took. */
  private readonly disarmedEarly = new Set<string>();
  private readonly taken = new Set<string>();
  /** Caller turns so far (utterances not spoken over the agent). */
  private turns = 0;
  private armed: Armed | null = null;
  /** The armed turn whose reply is being given (taken by an utterance), while it can still carry on. */
  private running: Armed | null = null;
  /** The last utterance reported for the workflow to answer (the gateway may still answer it). */
  private unanswered: { reported: ReportedUtterance; seq: number; timestampMs: number } | null = null;
  private closed = false;

  private readonly conversation?: Pick<ConversationMirror, 'planned' | 'heard' | 'requestFor'>;
  private readonly answerAlone?: (req: VoiceTurnRequest) => Promise<VoiceTurnResult>;
  private readonly heardWhole: (utteranceId: string) => boolean;
  private readonly runsTurns: () => boolean;
  private readonly journal?: (turn: RunTurn) => Promise<void>;
  private readonly policy?: TurnPolicy;

  constructor(
    private readonly reports: Pick<WorkflowReports, 'events' | 'utterance'> & { outbox: { readonly stalled: boolean } },
    options: DeliveryOptions = {},
  ) {
    this.conversation = options.conversation;
    this.answerAlone = options.answerAlone;
    this.heardWhole = options.heardWhole ?? (() => false);
    this.runsTurns = options.runsTurns ?? (() => true);
    this.journal = options.journal;
    this.policy = options.policy;
  }

  get isArmed(): boolean {
    return this.armed !== null;
  }

  /** The LLM request the armed turn would make if the caller said `text` now; null if none is armed. */
  requestIfSaid(text: string): VoiceTurnRequest | null {
    return this.armed ? requestOf(this.armed.req, text) : null;
  }

  deliver(turn: CompletedTurn): void {
    const seq = ++this.seq;
    const events = this.reports.events.drain();
    const armed = this.armed;
    this.unanswered = null;
    if (armed) {
      this.armed = null;
      this.remember(this.taken, armed.req.armId);
      this.take(armed, turn, seq, events);
      return;
    }
    const payload: UtteranceSignal = { text: turn.text, duringAgentSpeech: turn.duringAgentSpeech, events, seq };
    // A backchannel (spoken over the agent, too short to interrupt) is never answered alone.
    const request = !turn.duringAgentSpeech && this.reports.outbox.stalled ? this.conversation?.requestFor(turn.text, `o${seq}`) : null;
    if (!turn.duringAgentSpeech) this.counted(request && this.answerAlone ? 'alone' : 'not_armed');
    if (request && this.answerAlone) {
      const timestampMs = epochMs();
      const reply = this.answerAlone(request);
      // Its place in the order is now; it is sent once the reply has played.
      this.reports.utterance({ ...payload, timestampMs }, reply);
      return;
    }
    const reported = this.reports.utterance(payload);
    if (turn.duringAgentSpeech) return;
    this.conversation?.heard(turn.text);
    this.unanswered = { reported, seq, timestampMs: epochMs() };
  }

  /**
   * Temporal just stopped taking this call's reports: the last utterance reported for the workflow
   * to answer, if it is still waiting to be delivered, is answered by the gateway now (it had been
   * reported a moment before the outage showed).
   */
  answerPendingAlone(): void {
    const pending = this.unanswered;
    this.unanswered = null;
    if (!pending || pending.reported.delivered || !this.answerAlone || this.armed) return;
    const request = this.conversation?.requestFor(null, `o${pending.seq}`);
    if (request) pending.reported.answerWith(this.answerAlone(request), pending.timestampMs);
  }

  /** `armedTurn`: resolves when an utterance took the turn, it was disarmed, or the stream closed. */
  arm(req: ArmedTurnRequest, run: TurnRunner, cancel: AbortSignal): Promise<ArmedTurnResult> {
    if (this.closed) return Promise.resolve(nothing());
    // Taken back before it got here (see disarm): it must not replace a newer plan, nor wait.
    if (this.disarmedEarly.delete(req.armId)) return Promise.resolve(nothing());
    return new Promise((resolve) => {
      if (this.armed) this.finish(this.armed, nothing()); // one plan at a time: the newer one wins
      this.conversation?.planned(req);
      const reportAt = req.carryOn ? performance.now() + req.carryOn.idleInMs - IDLE_MARGIN_MS : Infinity;
      const armed: Armed = { req, run, cancel, resolve, turns: [], reportAt, timer: null, stopped: false };
      this.armed = armed;
      cancel.addEventListener('abort', () => this.disarm(req.armId), { once: true });
    });
  }

  /**
   * Takes the armed turn back, unless an utterance already took it. The two activities race on
   * the gateway's task queue (after a Temporal restart its pollers come back in any order): a
   * disarm for a turn not armed here yet is remembered, so the arm that follows is settled at once
   * instead of waiting for an utterance the workflow will never ask it about.
   */
  disarm(armId: string): void {
    const armed = this.armed;
    if (!armed || armed.req.armId !== armId) {
      if (this.running?.req.armId === armId) this.running.stopped = true;
      else if (!this.taken.has(armId)) this.remember(this.disarmedEarly, armId);
      return;
    }
    this.armed = null;
    this.finish(armed, nothing());
  }

  /**
   * The stream closed. An untaken armed turn completes with no utterance — unless its workflow
   * takes it back with the media session's result (`releasedWithMedia`, and `release`): then it
   * is never completed (its workflow ends without waiting for it) and its id is returned.
   */
  close(release = true): string | undefined {
    this.closed = true;
    const armed = this.armed;
    this.armed = null;
    if (!armed) return undefined;
    // A run with answered turns is never released: the workflow must record them.
    if (release && armed.req.releasedWithMedia && !armed.turns.length) return armed.req.armId;
    this.finish(armed, nothing());
    return undefined;
  }

  private take(armed: Armed, turn: CompletedTurn, seq: number, events: ArmedTurnResult['events']): void {
    const utterance = { text: turn.text, duringAgentSpeech: turn.duringAgentSpeech, seq, events, timestampMs: epochMs() };
    // A backchannel candidate is the workflow's to judge (min_words); a stale plan lacks words, or
    // assumed the caller had heard the whole of an utterance (the greeting) that was cut off.
    const stale = armed.req.afterSeq !== seq - 1 || (armed.req.afterSpeech !== undefined && !this.heardWhole(armed.req.afterSpeech));
    if (!turn.duringAgentSpeech) this.counted(stale ? 'stale_plan' : 'armed');
    // Spoken over the agent: a run judges min_words as the workflow would; otherwise the workflow does.
    const minWords = armed.req.carryOn?.minWords;
    const backchannel = turn.duringAgentSpeech && (minWords === undefined || isBackchannel(turn, this.policy ? { ...this.policy, minWords } : minWords));
    if (backchannel || stale) {
      this.finish(armed, { utterance, thought: null, failure: null, events: [] });
      return;
    }
    const req = requestOf(armed.req, turn.text);
    if (armed.req.carryOn) this.running = armed;
    const started = (async () => armed.run(req, armed.cancel))();
    started.then(
      (thought) => this.answered(armed, { utterance, thought, answeredAtMs: epochMs() }, req),
      (err: unknown) => this.finish(armed, { utterance, thought: null, failure: failureOf(err), events: this.reports.events.drain() }),
    );
  }

  /** A reply has played (or was cut off): a run arms itself with the next turn, else the turn is reported. */
  private answered(armed: Armed, turn: RunTurn, req: VoiceTurnRequest): void {
    const { carryOn } = armed.req;
    const now = performance.now();
    if (carryOn && armed.turns.length === 0) armed.reportAt = Math.min(armed.reportAt, now + carryOn.withinMs);
    // An utterance that came while the reply played went to the workflow: the run's plan is behind.
    const overtaken = this.seq !== turn.utterance.seq || this.armed !== null;
    const carries = carryOn && this.runsTurns() && !this.closed && !armed.stopped && !overtaken && !turn.thought.toolCalls.length && armed.turns.length + 1 < carryOn.turns && now < armed.reportAt;
    if (!carries) {
      this.finish(armed, { utterance: turn.utterance, thought: turn.thought, failure: null, events: [] });
      return;
    }
    armed.turns.push(turn);
    // Not kept safe: the run reports now (waiting), or when the turn it is in ends.
    this.journal?.(turn).catch(() => {
      armed.stopped = true;
      this.reportRun(armed);
    });
    const heard = turn.thought.heardText ? [{ role: 'assistant' as const, content: turn.thought.heardText }] : [];
    // What the workflow would arm next: its history gains the caller's words and what they heard.
    const { afterSpeech: _afterSpeech, ...next } = armed.req;
    armed.req = { ...next, utteranceId: `${armed.req.armId}-${armed.turns.length + 1}`, afterSeq: turn.utterance.seq, messages: [...req.messages, ...heard] };
    this.running = null;
    this.armed = armed;
    armed.timer ??= setTimeout(() => {
      armed.timer = null;
      this.reportRun(armed);
    }, Math.max(0, armed.reportAt - now));
    armed.timer.unref?.();
  }

  /** A run's report time came (or its journal failed) while it waits for the caller: its turns go to the workflow now. */
  private reportRun(armed: Armed): void {
    if (this.armed !== armed) return; // a turn is running: it reports when it ends
    this.armed = null;
    this.finish(armed, nothing());
  }

  /** Resolves the armed activity with `result`, preceded by the run's turns. */
  private finish(armed: Armed, result: ArmedTurnResult): void {
    if (armed.timer) clearTimeout(armed.timer);
    armed.timer = null;
    if (this.running === armed) this.running = null;
    armed.resolve(armed.turns.length ? { ...result, earlier: armed.turns.splice(0) } : result);
  }

  /** voice_turns_total: whether the workflow had this turn ready (the first turn is the one the greeting arms). */
  private counted(path: TurnPath): void {
    countTurnPath(path, ++this.turns === 1);
  }

  /** Adds to a short memory: only the last few arm ids can still be in flight. */
  private remember(ids: Set<string>, armId: string): void {
    ids.add(armId);
    if (ids.size > RECENT_ARM_IDS) ids.delete(ids.values().next().value!);
  }
}
