/**
 * How a call's caller utterances reach the call workflow. Each is numbered (1, 2, … per call).
 *
 * - When the workflow has armed the next turn (`armedTurn`: the LLM request minus the caller's
 *   words, see workflows/turn-arming.ts), the utterance completes that activity and, unless it is
 *   a backchannel candidate or the plan is stale, the LLM starts at once with the utterance
 *   appended: no workflow round trip before the reply.
 * - Otherwise (no turn ready: during a tool call, the greeting, a workflow of an older version) it
 *   goes as an `utterance` signal, one after the other so the workflow sees them in order.
 *
 * A plan is stale when the workflow had not yet received every earlier utterance (a signal in
 * flight): the utterance is then returned without a reply and the workflow answers it itself.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Logger } from '../shared/logger';
import {
  utteranceSignal,
  type ArmedTurnRequest,
  type ArmedTurnResult,
  type UtteranceSignal,
  type VoiceTurnRequest,
  type VoiceTurnResult,
} from '../../workflows/call-definitions';
import { epochMs, type GatewayEventLog } from './events';
import { SpeechUnavailable } from './tts-link';
import type { CompletedTurn } from './turn-detector';

const SIGNAL_ATTEMPTS = 3;

/** Runs an LLM turn into speech (voice-turn.ts), cancelled with `cancel`. */
export type TurnRunner = (req: VoiceTurnRequest, cancel: AbortSignal) => Promise<VoiceTurnResult>;

interface Armed {
  req: ArmedTurnRequest;
  cancel: AbortSignal;
  run: TurnRunner;
  resolve(result: ArmedTurnResult): void;
}

export interface DeliveryOptions {
  callId: string;
  workflow: WorkflowHandle;
  events: GatewayEventLog;
  log: Logger;
  /** The workflow is gone: the stream must close. */
  orphaned(): void;
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
  private armed: Armed | null = null;
  private signals: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly opts: DeliveryOptions) {}

  /** Signals still being delivered (awaited before the stream's closure is reported). */
  get settled(): Promise<void> {
    return this.signals.catch(() => undefined);
  }

  get isArmed(): boolean {
    return this.armed !== null;
  }

  deliver(turn: CompletedTurn): void {
    const seq = ++this.seq;
    const events = this.opts.events.drain();
    const armed = this.armed;
    if (armed) {
      this.armed = null;
      this.take(armed, turn, seq, events);
      return;
    }
    const payload: UtteranceSignal = { text: turn.text, duringAgentSpeech: turn.duringAgentSpeech, events, seq };
    this.signals = this.signals.then(() => this.signal(payload));
  }

  /** `armedTurn`: resolves when an utterance took the turn, it was disarmed, or the stream closed. */
  arm(req: ArmedTurnRequest, run: TurnRunner, cancel: AbortSignal): Promise<ArmedTurnResult> {
    if (this.closed) return Promise.resolve(nothing());
    return new Promise((resolve) => {
      this.armed?.resolve(nothing()); // one plan at a time: the newer one wins
      const armed: Armed = { req, run, cancel, resolve };
      this.armed = armed;
      cancel.addEventListener('abort', () => this.disarm(req.armId), { once: true });
    });
  }

  /** Takes the armed turn back, unless an utterance already took it. */
  disarm(armId: string): void {
    const armed = this.armed;
    if (!armed || armed.req.armId !== armId) return;
    this.armed = null;
    armed.resolve(nothing());
  }

  close(): void {
    this.closed = true;
    const armed = this.armed;
    this.armed = null;
    armed?.resolve(nothing());
  }

  private take(armed: Armed, turn: CompletedTurn, seq: number, events: ArmedTurnResult['events']): void {
    const utterance = { text: turn.text, duringAgentSpeech: turn.duringAgentSpeech, seq, events, timestampMs: epochMs() };
    // A backchannel candidate is the workflow's to judge (min_words); a stale plan lacks words.
    if (turn.duringAgentSpeech || armed.req.afterSeq !== seq - 1) {
      armed.resolve({ utterance, thought: null, failure: null, events: [] });
      return;
    }
    const { armId: _armId, afterSeq: _afterSeq, ...plan } = armed.req;
    const req: VoiceTurnRequest = { ...plan, messages: [...plan.messages, { role: 'user', content: turn.text.trim() }] };
    const started = (async () => armed.run(req, armed.cancel))();
    started.then(
      (thought) => armed.resolve({ utterance, thought, failure: null, events: [] }),
      (err: unknown) => armed.resolve({ utterance, thought: null, failure: failureOf(err), events: this.opts.events.drain() }),
    );
  }

  private async signal(payload: UtteranceSignal): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.opts.workflow.signal(utteranceSignal, payload);
        return;
      } catch (err) {
        const notFound = (err as Error).name === 'WorkflowNotFoundError';
        if (notFound || attempt >= SIGNAL_ATTEMPTS) {
          this.opts.log.error('could not deliver an utterance to the call workflow', { callId: this.opts.callId, error: (err as Error).message });
          // The workflow is gone: nobody will ever end this stream but us.
          if (notFound) this.opts.orphaned();
          return;
        }
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  }
}
