/**
 * Campaign events on the agent's webhook (docs/campaigns.md, "Webhooks"): each status change of a
 * campaign (status_seq, counted by a trigger: migration 0026) is delivered once, signed like the
 * call events, by the same delivery workflow (workflows/webhook-workflow.ts) with an id of its own,
 * `webhook-campaign-<id>-<seq>`. Whoever changed the status sends it straight after (an API action,
 * the campaign's step); the step also sends any change still unsent when it runs (a process that
 * died in between), so a change is never lost, and starting the same delivery twice is refused by
 * Temporal rather than sent twice.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { QueryTypes } from 'sequelize';
import type { Database } from '../db/database';
import type { CampaignStatus } from '../db/models/campaigns';
import type { WebhookDelivery } from '../../workflows/webhook-workflow';
import { campaignProgress } from './campaign-store';
import type { CampaignEventType } from '../shared/catalog';


/** The event of a change to `status`, after the change last sent was to `previous`. */
export function campaignEventOf(status: CampaignStatus, previous: CampaignStatus | null): CampaignEventType | null {
  switch (status) {
    case 'draft':
      return null;
    case 'running':
      return previous === 'paused' || previous === 'stopped' ? 'campaign_resumed' : 'campaign_started';
    default:
      return `campaign_${status}`;
  }
}

interface Pending {
  id: string;
  name: string;
  status: CampaignStatus;
  status_reason: string | null;
  status_seq: number;
  notified_seq: number;
  notified_status: CampaignStatus | null;
  agent_id: string | null;
  agent_name: string;
  webhook_url: string | null;
  webhook_events: string[] | null;
  webhook_secret_encrypted: string | null;
}

export interface CampaignNotifier {
  temporal: Client;
  db: Database;
  taskQueue: string;
  initialRetrySecs: number;
}

/** Sends the campaign's latest status change if it has not been sent; answers the event sent, if any. */
export async function notifyCampaignStatus(deps: CampaignNotifier, campaignId: string): Promise<CampaignEventType | null> {
  const [row] = await deps.db.sequelize.query<Pending>(
    `SELECT c.id, c.name, c.status, c.status_reason, c.status_seq, c.notified_seq, c.notified_status, c.agent_name,
            a.id AS agent_id, a.webhook_url, a.webhook_events, a.webhook_secret_encrypted
       FROM campaigns c LEFT JOIN agents a ON a.name = c.agent_name
      WHERE c.id = :campaignId`,
    { replacements: { campaignId }, type: QueryTypes.SELECT },
  );
  if (!row || row.status_seq <= row.notified_seq) return null;
  const type = campaignEventOf(row.status, row.notified_status);
  if (type && row.agent_id && row.webhook_url && (row.webhook_events ?? []).includes(type)) {
    const progress = await campaignProgress(deps.db, row.id);
    const delivery: WebhookDelivery = {
      messageId: `msg_campaign_${row.id.replace(/-/g, '')}_${row.status_seq}`,
      url: row.webhook_url,
      agentId: row.agent_id,
      secretEncrypted: row.webhook_secret_encrypted,
      initialRetrySecs: deps.initialRetrySecs,
      payload: {
        type,
        campaign_id: row.id,
        campaign_name: row.name,
        agent_name: row.agent_name,
        timestamp_ms: Date.now(),
        data: { status: row.status, reason: row.status_reason, progress },
      },
    };
    try {
      await deps.temporal.workflow.start('webhookDeliveryWorkflow', {
        workflowId: `webhook-campaign-${row.id}-${row.status_seq}`,
        taskQueue: deps.taskQueue,
        args: [delivery],
        // Sent once: a second start of the same change, even after the first finished, is refused.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
  await deps.db.sequelize.query(
    `UPDATE campaigns SET notified_seq = :seq, notified_status = :status WHERE id = :id AND notified_seq < :seq`,
    { replacements: { id: row.id, seq: row.status_seq, status: row.status } },
  );
  return type;
}
