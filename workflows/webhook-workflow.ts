/**
 * Delivers one outgoing webhook notification. A workflow of its own so that retries can go on for
 * a day after the call has ended; the workflow id (one per call event) and the stable `webhook-id`
 * header make every notification arrive once per id, however often it is retried.
 */
import { proxyActivities, setWorkflowOptions } from '@temporalio/workflow';
import type { Activities } from '../activities';

export interface WebhookDelivery {
  messageId: string;
  url: string;
  agentId: string;
  secretEncrypted: string | null;
  /** First retry delay; each next one doubles, capped at 2 h, for at least 24 h in total. */
  initialRetrySecs: number;
  payload: CallWebhookPayload | CampaignWebhookPayload;
}

/** A call event (docs/webhooks.md). */
export interface CallWebhookPayload {
  type: string;
  call_id: string;
  agent_name: string;
  phone_number: string;
  direction: string;
  timestamp_ms: number;
  data: Record<string, unknown>;
}

/** A campaign's status change (docs/campaigns.md, "Webhooks"). */
export interface CampaignWebhookPayload {
  type: string;
  campaign_id: string;
  campaign_name: string;
  agent_name: string;
  timestamp_ms: number;
  data: Record<string, unknown>;
}

// Standard Webhooks suggests retrying for about a day; give receivers a little more.
const DELIVERY_WINDOW = '30h';

export async function webhookDeliveryWorkflow(delivery: WebhookDelivery): Promise<{ attempts: number; status: number }> {
  const { deliverWebhook } = proxyActivities<Activities>({
    startToCloseTimeout: '30s',
    scheduleToCloseTimeout: DELIVERY_WINDOW,
    retry: {
      initialInterval: `${delivery.initialRetrySecs}s`,
      backoffCoefficient: 2,
      maximumInterval: '2h',
      nonRetryableErrorTypes: ['WebhookGone'],
    },
  });
  return deliverWebhook(delivery);
}

// Not pinned like the calls (docs/versioning.md): its one activity may be retried for 30 h, and an
// old version's workers should not stay that long for it. Its final task runs on the current
// version, so this code must keep its shape: one deliverWebhook, its result returned.
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, webhookDeliveryWorkflow);
