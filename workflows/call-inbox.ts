/**
 * The caller's turns as they reach the workflow, in the order they were spoken, whichever way they
 * came across the Temporal boundary:
 *
 * - an `utterance` signal (text calls' messages come as the sendText update instead);
 * - an armed turn's result (turn-arming.ts): the utterance with the reply the gateway already
 *   started, from the plan the workflow armed;
 * - a turn run's earlier turns, reported with the run's result (ArmedTurnResult.earlier), or read
 *   back from a lost gateway's journal (`runTurn`);
 * - a reply the gateway gave alone while Temporal was away (`utterance.reply`).
 *
 * Each becomes an Utterance in the queue the turn loop (turn-loop.ts) answers. Message handling
 * only: state changes, no awaits. Workflow code: deterministic, no I/O.
 */
import type { ArmedTurnResult, LlmTurnRequest, RunTurn, TextTurnResult, UtteranceSignal } from './call-definitions';
import type { CallContext } from './call-context';
import { isFinal } from './call-status';
import { answeredAt, type ArmedTurn, type Utterance } from './utterance';

// Enough to recognise any report an outbox could deliver twice (it redelivers only its head).
const RECENT_SEQS_KEPT = 64;

/** The plan an armed turn used: its request and the speech id of its reply. */
export type ArmedPlan = { request: LlmTurnRequest; utteranceId: string };

export class CallInbox {
  /** Utterances waiting for the turn loop, in the order they were spoken. */
  readonly queue: Utterance[] = [];
  /** Text calls: the answer to each sendText, by utterance id, until the update returns it. */
  readonly turnResults = new Map<number, TextTurnResult>();
  /** The last utterance number the gateway reported. */
  lastSeq: number;
  private ids = 0;
  /** Utterance numbers received lately: a report the gateway's outbox delivered twice counts once. */
  private readonly recentSeqs: number[] = [];

  constructor(private readonly ctx: CallContext) {
    this.lastSeq = ctx.input.carried?.lastUtteranceSeq ?? 0;
  }

  /** The `utterance` signal. */
  onSignal(signal: UtteranceSignal): void {
    const { ctx } = this;
    const { text, duringAgentSpeech, events, seq } = signal;
    if (typeof text !== 'string') throw new TypeError(`text is ${typeof text}, not a string`);
    if (this.isRepeated(seq)) return;
    ctx.recordGatewayEvents(events);
    const n = typeof seq === 'number' && Number.isFinite(seq) ? seq : undefined;
    this.noteSeq(n);
    const reply = this.replyOf(signal);
    const ended = isFinal(ctx.status) || ctx.endRequest !== null;
    // A reply the caller heard is the call's even if the hang-up was processed first.
    if ((!ended || (reply && !isFinal(ctx.status))) && text.trim()) this.enqueue(text.trim(), duringAgentSpeech === true, n, reply);
  }

  /** Queues an utterance (a sendText's text, a signal's, an armed turn's); returns its id. */
  enqueue(text: string, duringAgentSpeech = false, seq?: number, prepared?: Utterance['prepared'], events?: Utterance['events']): number {
    const id = ++this.ids;
    const u: Utterance = { id, text, duringAgentSpeech, ...(seq !== undefined ? { seq } : {}), ...(prepared ? { prepared } : {}), ...(events?.length ? { events } : {}) };
    // In the order they were spoken: an armed turn's utterance may overtake a signal in flight.
    const later = seq === undefined ? -1 : this.queue.findIndex((q) => q.seq !== undefined && q.seq > seq);
    if (later < 0) this.queue.push(u);
    else this.queue.splice(later, 0, u);
    return id;
  }

  /** A turn a run answered, as the queue holds it (read back from a lost gateway's journal). */
  runTurn(t: RunTurn): Utterance {
    const { utterance: u, thought, answeredAtMs } = t;
    const prepared = { thought, failure: null, atMs: u.timestampMs, ...answeredAt(answeredAtMs) };
    return { id: ++this.ids, text: u.text.trim(), duringAgentSpeech: u.duringAgentSpeech === true, seq: u.seq, prepared, ...(u.events?.length ? { events: u.events } : {}) };
  }

  /**
   * The call's stream went away for a transfer: the next stream (the briefed destination's, or the
   * caller's coming back) numbers its utterances from 1 again, and they are not repeats.
   */
  newStream(): void {
    this.lastSeq = 0;
    this.recentSeqs.length = 0;
  }

  /** The gateway's number of an utterance it reported (signal or armed turn). */
  noteSeq(seq: unknown): void {
    if (typeof seq === 'number' && Number.isFinite(seq) && seq > this.lastSeq) this.lastSeq = seq;
    if (typeof seq === 'number') {
      this.recentSeqs.push(seq);
      if (this.recentSeqs.length > RECENT_SEQS_KEPT) this.recentSeqs.shift();
    }
  }

  /** A report of an utterance this run already has (delivered again after a lost acknowledgement). */
  private isRepeated(seq: unknown): boolean {
    return typeof seq === 'number' && this.recentSeqs.includes(seq);
  }

  /**
   * A reply the gateway gave alone while Temporal was away (`utterance.reply`): handled like an
   * armed turn's, recorded at the gateway's time.
   */
  private replyOf(signal: UtteranceSignal): Utterance['prepared'] {
    const reply = signal.reply;
    if (!reply || typeof reply.heardText !== 'string') return undefined;
    const atMs = Number.isFinite(signal.timestampMs) ? signal.timestampMs! : Date.now();
    return { thought: reply, failure: null, atMs };
  }

  /** An armed turn's result (turn-arming.ts), with the plan it was armed with. */
  onArmedResult(result: ArmedTurnResult, plan: ArmedPlan): void {
    // A turn run's turns came first, each as if reported alone; only the first used the armed plan.
    const turns: ArmedTurn[] = [...(result.earlier ?? []).map((t) => ({ ...t, failure: null })), result];
    turns.forEach((turn, i) => this.onArmedTurn(turn, i === 0 ? plan : 'run', i === turns.length - 1 ? result.events : undefined));
  }

  /**
   * One turn of an armed activity's result. `armed`: the workflow's plan it used, or `run` for a
   * run's later turn (the gateway's plan); `events`: the result's own, after the utterance's.
   */
  private onArmedTurn(result: ArmedTurn, armed: ArmedPlan | 'run', events: ArmedTurnResult['events'] | undefined): void {
    const { ctx } = this;
    const u = result.utterance;
    // A run's later turn: its events go in with it, after the turns before it.
    const deferred = armed === 'run' && u && !isFinal(ctx.status) ? u.events : undefined;
    if (!deferred) ctx.recordGatewayEvents(u ? u.events : undefined);
    ctx.recordGatewayEvents(events);
    // A reply the gateway already spoke belongs to the call even if the hang-up was processed
    // first (its result can arrive after the hang-up's): recorded, not dropped.
    const spoken = result.thought !== null && ctx.endRequest !== null && !isFinal(ctx.status);
    const ended = isFinal(ctx.status) || (ctx.endRequest !== null && !spoken);
    if (!u || ended || typeof u.text !== 'string' || !u.text.trim()) {
      // Nobody will answer it: whatever the gateway reported still goes into the call's events.
      ctx.recordGatewayEvents(deferred);
      ctx.recordGatewayEvents(result.thought?.events);
      if (u) this.noteSeq(u.seq);
      return;
    }
    this.noteSeq(u.seq);
    const atMs = Number.isFinite(u.timestampMs) ? u.timestampMs : Date.now();
    const prepared = result.thought || result.failure ? { thought: result.thought, failure: result.failure, ...(armed === 'run' ? {} : armed), atMs, ...answeredAt(result.answeredAtMs) } : undefined;
    this.enqueue(u.text.trim(), u.duringAgentSpeech === true, u.seq, prepared, deferred);
  }
}
