/**
 * Starts the delivery of one call event to the agent's webhook: a child workflow per event (its
 * id and the `webhook-id` header derive from the call and the event's sequence number, so each
 * event is delivered once however often this runs), abandoned by its parent so retries outlive it.
 * Workflow code.
 */
import { ParentClosePolicy, startChild } from '@temporalio/workflow';
import type { CallEventRecord } from './call-definitions';
import { webhookDeliveryWorkflow } from './webhook-workflow';

export interface WebhookTarget {
  callId: string;
  agent: { id: string; name: string; webhook_url: string | null; webhook_secret_encrypted: string | null };
  phoneNumber: string;
  direction: string;
  initialRetrySecs: number;
}

export function startWebhookDelivery(target: WebhookTarget, event: CallEventRecord): Promise<unknown> {
  const { callId, agent, phoneNumber, direction } = target;
  return startChild(webhookDeliveryWorkflow, {
    workflowId: `webhook-${callId}-${event.seq}`,
    parentClosePolicy: ParentClosePolicy.ABANDON,
    args: [
      {
        messageId: `msg_${callId.replace(/-/g, '')}_${event.seq}`,
        url: agent.webhook_url!,
        agentId: agent.id,
        secretEncrypted: agent.webhook_secret_encrypted,
        initialRetrySecs: target.initialRetrySecs,
        payload: {
          type: event.type,
          call_id: callId,
          agent_name: agent.name,
          phone_number: phoneNumber,
          direction,
          timestamp_ms: event.timestampMs,
          data: event.data,
        },
      },
    ],
  });
}
