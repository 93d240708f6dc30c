/** A transfer's vendor callback relayed to the call workflow (routes/telephony-transfer.ts, routes/telephony-warm.ts). */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { ApiContext } from '../context';
import { HttpError } from '../errors';
import { callWorkflowId, transferEventSignal, type TransferEventSignal } from '../../../workflows/call-definitions';

/** Tells the call workflow; one that has ended (a late or repeated callback) is not an error: false. */
export function transferSignaller({ temporal, log }: Pick<ApiContext, 'temporal' | 'log'>) {
  return async function tell(callId: string, signal: TransferEventSignal): Promise<boolean> {
    try {
      await temporal.workflow.getHandle(callWorkflowId(callId)).signal(transferEventSignal, signal);
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      log.error('could not deliver a transfer outcome to the call workflow', { call_id: callId, error: err });
      throw new HttpError(503, 'The call workflow could not be reached');
    }
  };
}
