/**
 * Hanging up the provider's side of a phone call when the call ends on the platform's side
 * (agent end_call, POST /api/calls/end, idle end, failure, a lost media gateway): the workflow
 * runs this in its finish path, so no caller is left on a dead line. The media gateway cannot
 * do it (it has no database or credentials), and closing the stream is not enough for every
 * vendor (Plivo's keepCallAlive holds the call without one).
 */
import type { ActivityDeps } from '.';
import { hangupProviderCall, type HangupOutcome } from '../src/calls/telephony-calls';
import { startTransfer, type TransferStart } from '../src/calls/call-transfer';
import type { TransferTarget } from '../src/shared/transfer';
import { giveBackWarmTransfer, joinWarmTransfer, startWarmTransfer, type WarmStart, type WarmStep } from '../src/calls/warm-transfer';

export function createTelephonyActivities(deps: ActivityDeps) {
  return {
    /** Retried by the workflow while the provider is unreachable; other failures are logged, not thrown. */
    async hangupProviderCall(input: { callId: string }): Promise<HangupOutcome> {
      return hangupProviderCall(deps, input.callId);
    },
    /** Cold transfer (docs/phone-operations.md#transfer-to-a-human); throws only while the provider is unreachable. */
    async transferProviderCall(input: { callId: string; target: TransferTarget; ringTimeoutSecs: number }): Promise<TransferStart> {
      return startTransfer(deps, input);
    },
    /** Warm transfer (docs/phone-operations.md#warm-transfer): the caller on hold, the human dialled. */
    async warmTransferStart(input: { callId: string; target: TransferTarget; holdAudio: string; maxWaitSecs: number }): Promise<WarmStart> {
      return startWarmTransfer(deps, input);
    },
    /** Warm transfer: the human joins the caller (the agent leaves). */
    async warmTransferJoin(input: { callId: string; humanCallId: string }): Promise<WarmStep> {
      return joinWarmTransfer(deps, input);
    },
    /** Warm transfer that did not happen: the human's leg hung up, the caller back to the agent. */
    async warmTransferGiveBack(input: { callId: string; humanCallId: string | null }): Promise<WarmStep> {
      return giveBackWarmTransfer(deps, input);
    },
  };
}
