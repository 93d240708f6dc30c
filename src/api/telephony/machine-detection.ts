/**
 * POST /telephony/{provider}/machine/{call_id}: a vendor's answering-machine detection result
 * (docs/phone-operations.md#voicemail-on-outbound-calls), authenticated like every webhook of the vendor, becomes an
 * `answeredBy` signal to the call's workflow (source `vendor`). Unknown calls and requests that are
 * not a result are answered 204, so the vendor does not retry.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Request, Response } from 'express';
import type { CallRow } from '../../db/models';
import type { MachineDetectionResult, TelephonyVendor, WebhookRequest } from '../../providers/telephony/types';
import type { Logger } from '../../shared/logger';
import { answeredBySignal, callWorkflowId } from '../../../workflows/call-definitions';

/** The URL a vendor posts its machine-detection result to, for one outbound call. */
export function machineDetectionUrl(publicBaseUrl: string, provider: string, callId: string): string {
  return `${publicBaseUrl}/telephony/${provider}/machine/${callId}`;
}

interface MachineRouteDeps {
  temporal: Client;
  log: Logger;
  findCall(callId: string): Promise<CallRow | null>;
  authenticated(provider: string, req: Request): Promise<{ vendor: TelephonyVendor; request: WebhookRequest }>;
  parsed<T>(parse: () => T): T;
}

export function machineDetectionRoute({ temporal, log, findCall, authenticated, parsed }: MachineRouteDeps) {
  return async function machine(provider: string, callId: string, req: Request, res: Response): Promise<void> {
    const { vendor, request } = await authenticated(provider, req);
    const result: MachineDetectionResult | null = vendor.webhooks.machineDetection ? parsed(() => vendor.webhooks.machineDetection!(request)) : null;
    const call = await findCall(callId);
    if (!result || !call || call.provider !== vendor.name) {
      log.debug('machine detection callback ignored', { provider, call_id: callId, known_call: !!call, result: result?.providerResult });
      res.status(204).end();
      return;
    }
    log.info('vendor machine detection', { provider, call_id: call.id, answered_by: result.answeredBy, result: result.providerResult });
    try {
      await temporal.workflow.getHandle(callWorkflowId(call.id)).signal(answeredBySignal, {
        answered_by: result.answeredBy,
        source: 'vendor',
        reason: result.providerResult,
        ...(result.greetingEnded ? { beep_heard: true } : {}),
      });
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) {
        log.error('could not deliver a machine-detection result to the call workflow', { call_id: call.id, error: err });
        res.status(503).json({ detail: 'The call workflow could not be reached' });
        return;
      }
    }
    res.status(204).end();
  };
}
