/**
 * What the gateway tells a call's workflow on its own initiative, in one place: that the stream
 * connected (`mediaConnected`), the caller utterances no armed turn took (`utterance` signals, one
 * after the other so the workflow sees them in order, retried), and the gateway events that ride
 * along with those and with activity results (`events`, see events.ts). A workflow that is gone
 * is reported back (`orphaned`): nobody but the gateway will ever end that stream.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { Logger } from '../shared/logger';
import { mediaConnectedSignal, utteranceSignal, type MediaConnectedSignal, type UtteranceSignal } from '../../workflows/call-definitions';
import { GatewayEventLog } from './events';

const SIGNAL_ATTEMPTS = 3;

export interface WorkflowReportsOptions {
  callId: string;
  workflow: WorkflowHandle;
  log: Logger;
  /** The workflow is gone: the stream must close. */
  orphaned(): void;
}

export class WorkflowReports {
  /** Events waiting for the next signal or activity result. */
  readonly events = new GatewayEventLog();
  private signals: Promise<void> = Promise.resolve();

  constructor(private readonly opts: WorkflowReportsOptions) {}

  /** `mediaConnected`, carrying the events so far; rejects when the workflow cannot be reached. */
  connected(stream: Omit<MediaConnectedSignal, 'events'>): Promise<void> {
    return this.opts.workflow.signal(mediaConnectedSignal, { ...stream, events: this.events.drain() });
  }

  /** A caller utterance for the workflow to answer, sent after every one before it. */
  utterance(payload: UtteranceSignal): void {
    this.signals = this.signals.then(() => this.signal(payload));
  }

  /** Utterances still being delivered (awaited before the stream's closure is reported). */
  get settled(): Promise<void> {
    return this.signals.catch(() => undefined);
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
          if (notFound) this.opts.orphaned();
          return;
        }
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  }
}
