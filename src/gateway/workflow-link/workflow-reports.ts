/**
 * What the gateway tells a call's workflow, in one place and in one order (workflow-outbox.ts):
 * that the stream connected (`mediaConnected`), the caller utterances no armed turn took
 * (`utterance` signals), and the results of the activities it ran for the call, completed
 * asynchronously so that they queue behind earlier reports and survive a Temporal outage. The
 * gateway events ride along with those (`events`, see events.ts).
 */
import type { AsyncCompletionClient, Client, WorkflowHandle } from '@temporalio/client';
import type { Logger } from '../../shared/logger';
import { signalWithStartExisting, type WorkflowTarget } from '../../temporal/signal-with-start';
import type { AnsweredByVerdict } from '../../voicemail/settings';
import { answeredBySignal, mediaConnectedSignal, utteranceSignal, type MediaConnectedSignal, type UtteranceSignal, type VoiceTurnResult } from '../../../workflows/call-definitions';
import { GatewayEventLog } from './events';
import { WorkflowOutbox, type TemporalReachability } from './workflow-outbox';

/** An utterance reported to the workflow: until it is delivered, the gateway may still answer it. */
export interface ReportedUtterance {
  readonly delivered: boolean;
  /** Sends `answer` with the utterance (a reply the gateway gives alone while Temporal is away). */
  answerWith(answer: Promise<VoiceTurnResult>, timestampMs: number): void;
}

export interface WorkflowReportsOptions {
  callId: string;
  workflow: WorkflowHandle;
  /** Completes the activities the gateway runs for the call (`client.activity`). */
  activities: AsyncCompletionClient;
  log: Logger;
  /** Whether Temporal takes this gateway's reports (shared by its calls). */
  reachability?: TemporalReachability;
  /** The workflow is gone: the stream must close. */
  orphaned(): void;
  /**
   * Sends `mediaConnected` (default: a plain signal). The media stream sends it as a
   * signal-with-start, which also starts a call workflow still waiting out its start delay.
   */
  sendConnected?: (signal: MediaConnectedSignal) => Promise<unknown>;
}

/**
 * `mediaConnected` as a signal-with-start: an incoming call's workflow waits for its stream (a
 * start delay) and runs at once with the signal in its first task — one workflow task per call
 * fewer. Refused if the call has ended meanwhile, which the outbox takes as the workflow gone.
 */
export function connectedWithStart(temporal: Client, target: WorkflowTarget) {
  return (signal: MediaConnectedSignal) => signalWithStartExisting(temporal, target, mediaConnectedSignal, signal);
}

export class WorkflowReports {
  /** Events waiting for the next signal or activity result. */
  readonly events = new GatewayEventLog();
  readonly outbox: WorkflowOutbox;

  /** Told when Temporal stops taking this call's reports (utterance-delivery.ts answers alone). */
  onStalled: () => void = () => undefined;

  constructor(private readonly opts: WorkflowReportsOptions) {
    this.outbox = new WorkflowOutbox({
      callId: opts.callId,
      log: opts.log,
      orphaned: opts.orphaned,
      reachability: opts.reachability,
      stalled: () => this.onStalled(),
    });
  }

  /** `mediaConnected`, carrying the events so far. */
  connected(stream: Omit<MediaConnectedSignal, 'events'>): void {
    const signal = { ...stream, events: this.events.drain() };
    const send = this.opts.sendConnected ?? ((s: MediaConnectedSignal) => this.opts.workflow.signal(mediaConnectedSignal, s));
    this.outbox.push('mediaConnected', async () => {
      await send(signal);
    });
  }

  /** Who answered (voicemail detection), with the events so far, in the call's order. */
  answeredBy(verdict: AnsweredByVerdict): void {
    this.outbox.push(`answeredBy ${verdict.answered_by}`, () => this.opts.workflow.signal(answeredBySignal, verdict));
  }

  /**
   * A caller utterance for the workflow to answer — or, with `reply`, one the gateway answered
   * while Temporal was away: sent with the reply once it has played (a failed reply is left to
   * the workflow), in the utterance's place in the order.
   */
  utterance(payload: UtteranceSignal, reply?: Promise<VoiceTurnResult>): ReportedUtterance {
    const signal: UtteranceSignal = { ...payload };
    const item = this.outbox.push(`utterance ${payload.seq ?? ''}`, () => this.opts.workflow.signal(utteranceSignal, signal));
    const answerWith = (answer: Promise<VoiceTurnResult>, timestampMs: number) => {
      item.ready = answer.then((r) => Object.assign(signal, { reply: r, timestampMs }));
    };
    if (reply) answerWith(reply, payload.timestampMs ?? Date.now());
    return {
      get delivered() {
        return item.delivered;
      },
      answerWith,
    };
  }

  /** An activity's result, delivered after every report queued before it. */
  complete(what: string, taskToken: Uint8Array, result: unknown): void {
    this.outbox.push(what, () => this.opts.activities.complete(taskToken, result));
  }

  /** An activity's failure, delivered in order like a result. */
  fail(what: string, taskToken: Uint8Array, err: unknown): void {
    this.outbox.push(`${what} (failed)`, () => this.opts.activities.fail(taskToken, err));
  }

  /** Everything reported so far has been delivered (or dropped). */
  get settled(): Promise<void> {
    return this.outbox.drained();
  }
}
