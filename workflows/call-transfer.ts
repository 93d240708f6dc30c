/**
 * Transfer to a human (docs/phone-operations.md#transfer-to-a-human): the `transfer_call` builtin tool and
 * flow pre-action. The agent says the destination's message, an activity asks the vendor to dial
 * the destination on the live call (a cold transfer), and the vendor's dial callbacks decide:
 * answered — the call ends `completed` / `transferred` at the hand-over (recording, transcript and
 * duration stop there); busy, no answer, failed — the vendor connects the caller to a new media
 * stream for the same call and the agent carries on. Workflow code: deterministic, no I/O.
 */
import { condition, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { substitute } from '../src/shared/template';
import { failureReason, targetText, TRANSFER_CALL, transferTarget } from '../src/shared/transfer';
import type { TransferEventSignal, VoiceConfig } from './call-definitions';
import { isFinal } from './call-status';
import { AgentTurns } from './agent-turns';

// How long the vendor's dial may take to report (ringing included) before the call is given up.
const DIAL_REPORT_LIMIT_SECS = 120;

const { transferProviderCall } = proxyActivities<Activities>({
  startToCloseTimeout: '20s',
  // Only an unreachable provider is thrown as retryable; a refusal comes back as a result.
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '5s', maximumAttempts: 4 },
});

export interface TransferState {
  destination: string;
  /** The vendor's dial report, once it came. */
  outcome: TransferEventSignal | null;
  /** The call's stream went away for the dial: a new stream of the call is welcome. */
  awaitingStream: boolean;
}

export abstract class TransferTurns extends AgentTurns {
  protected transfer: TransferState | null = null;
  /** When the caller was handed over: the call's end time and duration stop there. */
  protected handedOverAtMs: number | null = null;
  /** Bumped when the call's stream goes away for a transfer: reports of the old stream are stale. */
  protected mediaGeneration = 0;

  override get voiceConfig(): VoiceConfig {
    return { ...super.voiceConfig, ...(this.transfer?.awaitingStream ? { awaitingStream: true } : {}) };
  }

  /** Waits for the call's stream to (re)connect and holds its media session (call-session.ts). */
  protected abstract connectMedia(): Promise<void>;

  /** The transfer_call tool is offered: destinations exist and the call's vendor can transfer. */
  protected canTransfer(): boolean {
    return (this.input.agent.transfer_destinations?.length ?? 0) > 0 && this.input.transfer?.supported === true && this.input.channel === 'voice';
  }

  /** The vendor's dial callback, relayed by the API (signal handler: state only). */
  onTransferEvent(signal: TransferEventSignal): void {
    if (typeof signal?.outcome !== 'string') throw new TypeError('outcome is not a string');
    if (!this.transfer || this.transfer.outcome) return;
    this.transfer.outcome = signal;
  }

  /** A stream re-attached after a transfer that came back is not the caller hanging up. */
  protected get transferring(): boolean {
    return this.transfer !== null;
  }

  /** Runs transfer_call; returns the text the LLM gets back (tool result). */
  protected async transferCall(name: string, source: string): Promise<string> {
    const destination = (this.input.agent.transfer_destinations ?? []).find((d) => d.name === name);
    const refuse = (message: string) => {
      this.recorder.record('tool_result', { function: TRANSFER_CALL, result: null, error: message, source });
      return `Error: ${message}. Tell the caller you cannot transfer them right now.`;
    };
    if (!destination) return refuse(`unknown transfer destination "${name}"`);
    if (!this.canTransfer()) return refuse(`calls through ${this.input.transfer?.provider ?? 'this channel'} cannot be transferred`);
    if (this.transfer) return refuse('a transfer is already under way');
    if (destination.message) await this.agentSays(substitute(destination.message, this.conv.variables));
    if (this.endRequest !== null || isFinal(this.status)) return refuse('the call ended before the transfer');
    const target = transferTarget(destination);
    this.transfer = { destination: name, outcome: null, awaitingStream: true };
    this.recorder.record('transfer_started', { destination: name, mode: 'cold', to: targetText(target) });
    const requested = await transferProviderCall({ callId: this.input.callId, target, ringTimeoutSecs: this.input.options.ringTimeoutSecs }).catch(
      (err: Error) => ({ ok: false as const, error: `the provider could not be reached: ${err.message}` }),
    );
    if (!requested.ok) {
      this.transfer = null;
      this.recorder.record('transfer_failed', { destination: name, reason: requested.error });
      return refuse(`the transfer could not start (${requested.error})`);
    }
    // The vendor moved the call off our stream: whatever that stream reports now is stale.
    this.detachMedia();
    const reported = await condition(() => this.transfer!.outcome !== null || this.endRequest !== null || isFinal(this.status), `${DIAL_REPORT_LIMIT_SECS}s`);
    const outcome = this.transfer.outcome;
    if (!outcome || !reported) {
      this.transfer = null;
      const reason = reported ? 'the caller hung up during the transfer' : `no word from the provider within ${DIAL_REPORT_LIMIT_SECS} s`;
      this.recorder.record('transfer_failed', { destination: name, reason });
      if (!reported) this.requestEnd('agent_ended');
      this.recorder.record('tool_result', { function: TRANSFER_CALL, result: null, error: reason, source });
      return `The transfer did not complete: ${reason}.`;
    }
    if (outcome.outcome === 'answered' || outcome.outcome === 'completed') {
      this.transfer.awaitingStream = false;
      this.handedOverAtMs = Date.now();
      this.recorder.record('transfer_completed', { destination: name, ...(outcome.detail ?? {}) });
      this.recorder.record('tool_result', { function: TRANSFER_CALL, result: `transferred to ${name}`, source });
      this.requestEnd('transferred');
      return `The caller was transferred to ${name}.`;
    }
    const reason = failureReason(outcome.outcome);
    this.recorder.record('transfer_failed', { destination: name, reason, ...(outcome.detail ?? {}) });
    // The vendor's dial action answered with a new stream for this call: hold it again.
    await this.connectMedia();
    this.transfer = null;
    this.recorder.record('tool_result', { function: TRANSFER_CALL, result: null, error: `transfer failed: ${reason}`, source });
    return `The transfer to ${name} did not go through (${reason}). The caller is back on the line with you: tell them, and carry on helping them.`;
  }

  /** The call's stream ended for the hand-over; a new one (same call) may come back later. */
  private detachMedia(): void {
    this.mediaGeneration++;
    this.gatewayTaskQueue = null;
    this.channel = null;
    this.mediaClosed = false;
  }
}
