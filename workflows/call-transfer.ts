/**
 * Transfer to a human (docs/phone-operations.md#transfer-to-a-human): the `transfer_call` builtin tool and
 * flow pre-action. The agent says the destination's message, an activity asks the vendor to dial
 * the destination on the live call (a cold transfer), and the vendor's dial callbacks decide:
 * answered — the call ends `completed` / `transferred` at the hand-over (recording, transcript and
 * duration stop there); busy, no answer, failed — the vendor connects the caller to a new media
 * stream for the same call and the agent carries on. A warm destination runs call-warm-transfer.ts.
 * Workflow code: deterministic, no I/O.
 */
import { condition, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { substitute } from '../src/shared/template';
import { failureReason, targetText, TRANSFER_CALL, transferTarget } from '../src/shared/transfer';
import type { CallWorkflowInput, TransferEventSignal } from './call-definitions';
import type { CallContext } from './call-context';
import type { CallMedia } from './call-media';
import type { CallInbox } from './call-inbox';
import { WarmTransfer } from './call-warm-transfer';
import { isFinal } from './call-status';

// How long the vendor's dial may take to report (ringing included) before the call is given up.
const DIAL_REPORT_LIMIT_SECS = 120;

const { transferProviderCall } = proxyActivities<Activities>({
  startToCloseTimeout: '20s',
  // Only an unreachable provider is thrown as retryable; a refusal comes back as a result.
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '5s', maximumAttempts: 4 },
});

export interface TransferState {
  destination: string;
  mode: 'cold' | 'warm';
  /** Cold: the vendor's dial report, once it came. Warm: the destination's leg ended (busy, no answer, a machine, a hang-up). */
  outcome: TransferEventSignal | null;
  /** Warm: the destination's leg answered (its stream comes to the gateway for the briefing). */
  answered?: TransferEventSignal | null;
  /** The call's stream went away for the dial: a new stream of the call is welcome. */
  awaitingStream: boolean;
}

/** The transfer_call tool is offered: destinations exist and the call's vendor can transfer. */
export function canTransfer(input: CallWorkflowInput): boolean {
  return input.agent.transfer_destinations.length > 0 && input.transfer?.supported === true && input.channel === 'voice';
}

export class Transfer {
  private readonly warm: WarmTransfer;

  constructor(
    private readonly ctx: CallContext,
    private readonly media: CallMedia,
    private readonly inbox: CallInbox,
  ) {
    this.warm = new WarmTransfer(ctx, media, inbox);
  }

  /** The vendor's dial callback, relayed by the API (signal handler: state only). */
  onTransferEvent(signal: TransferEventSignal): void {
    if (typeof signal?.outcome !== 'string') throw new TypeError('outcome is not a string');
    const transfer = this.ctx.transfer;
    if (!transfer) return;
    if (transfer.mode === 'warm' && signal.outcome === 'answered') transfer.answered ??= signal;
    else transfer.outcome ??= signal;
  }

  /** Runs transfer_call; returns the text the LLM gets back (tool result). */
  async transferCall(name: string, source: string): Promise<string> {
    const { ctx } = this;
    const { input, recorder } = ctx;
    const destination = input.agent.transfer_destinations.find((d) => d.name === name);
    const refuse = (message: string) => {
      recorder.record('tool_result', { function: TRANSFER_CALL, result: null, error: message, source });
      return `Error: ${message}. Tell the caller you cannot transfer them right now.`;
    };
    if (!destination) return refuse(`unknown transfer destination "${name}"`);
    if (!canTransfer(input)) return refuse(`calls through ${input.transfer?.provider ?? 'this channel'} cannot be transferred`);
    if (ctx.transfer) return refuse('a transfer is already under way');
    if (destination.message) await ctx.say(substitute(destination.message, ctx.conv.variables));
    if (ctx.endRequest !== null || isFinal(ctx.status)) return refuse('the call ended before the transfer');
    // A warm destination on a vendor without warm transfer (or a call started before it) goes cold.
    if (destination.mode === 'warm' && input.transfer?.warm === true) return this.warm.run(destination, source, refuse);
    const target = transferTarget(destination);
    const transfer: TransferState = { destination: name, mode: 'cold', outcome: null, awaitingStream: true };
    ctx.transfer = transfer;
    recorder.record('transfer_started', { destination: name, mode: 'cold', to: targetText(target), ...(destination.mode === 'warm' ? { warm_unavailable: true } : {}) });
    const requested = await transferProviderCall({ callId: input.callId, target, ringTimeoutSecs: input.options.ringTimeoutSecs }).catch(
      (err: Error) => ({ ok: false as const, error: `the provider could not be reached: ${err.message}` }),
    );
    if (!requested.ok) {
      ctx.transfer = null;
      recorder.record('transfer_failed', { destination: name, reason: requested.error });
      return refuse(`the transfer could not start (${requested.error})`);
    }
    // The vendor moved the call off our stream: whatever that stream reports now is stale.
    this.media.detach();
    this.inbox.newStream();
    const reported = await condition(() => transfer.outcome !== null || ctx.endRequest !== null || isFinal(ctx.status), `${DIAL_REPORT_LIMIT_SECS}s`);
    const outcome = transfer.outcome;
    if (!outcome || !reported) {
      ctx.transfer = null;
      const reason = reported ? 'the caller hung up during the transfer' : `no word from the provider within ${DIAL_REPORT_LIMIT_SECS} s`;
      recorder.record('transfer_failed', { destination: name, reason });
      if (!reported) ctx.requestEnd('agent_ended');
      recorder.record('tool_result', { function: TRANSFER_CALL, result: null, error: reason, source });
      return `The transfer did not complete: ${reason}.`;
    }
    if (outcome.outcome === 'answered' || outcome.outcome === 'completed') {
      transfer.awaitingStream = false;
      ctx.handedOverAtMs = Date.now();
      recorder.record('transfer_completed', { destination: name, ...(outcome.detail ?? {}) });
      recorder.record('tool_result', { function: TRANSFER_CALL, result: `transferred to ${name}`, source });
      ctx.requestEnd('transferred');
      return `The caller was transferred to ${name}.`;
    }
    const reason = failureReason(outcome.outcome);
    recorder.record('transfer_failed', { destination: name, reason, ...(outcome.detail ?? {}) });
    // The vendor's dial action answered with a new stream for this call: hold it again.
    await this.media.connect();
    ctx.transfer = null;
    recorder.record('tool_result', { function: TRANSFER_CALL, result: null, error: `transfer failed: ${reason}`, source });
    return `The transfer to ${name} did not go through (${reason}). The caller is back on the line with you: tell them, and carry on helping them.`;
  }
}
