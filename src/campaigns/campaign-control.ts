/**
 * Starting a campaign's workflow and moving its status (pause, resume, cancel). The row is the
 * truth: the API writes it, then signals the workflow to take a step now; a signal that does not
 * arrive only delays that step (the workflow reads the row each time).
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Database } from '../db/database';
import type { CampaignRow, CampaignStatus } from '../db/models/campaigns';
import { campaignChangedSignal, campaignWorkflowId, type CampaignWorkflowInput } from '../../workflows/campaign-definitions';

export type CampaignAction = 'start' | 'pause' | 'resume' | 'cancel';

/** From which statuses each action may be taken. */
export const ALLOWED_FROM: Record<CampaignAction, CampaignStatus[]> = {
  start: ['draft'],
  pause: ['scheduled', 'running'],
  resume: ['paused', 'stopped'],
  cancel: ['draft', 'scheduled', 'running', 'paused', 'stopped'],
};

/** Starts (or finds) the campaign's workflow; answers its first run's id. */
export async function startCampaignWorkflow(deps: { temporal: Client; config: Config }, campaignId: string, stepsPerRun?: number): Promise<string> {
  const input: CampaignWorkflowInput = { campaignId, ...(stepsPerRun ? { stepsPerRun } : {}) };
  const handle = await deps.temporal.workflow.start('campaignWorkflow', {
    workflowId: campaignWorkflowId(campaignId),
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    args: [input],
    // A retried start (the API died after starting it) finds the running one.
    workflowIdConflictPolicy: 'USE_EXISTING',
    staticSummary: `campaign ${campaignId}`,
  });
  return handle.firstExecutionRunId;
}

export async function signalCampaign(temporal: Client, campaignId: string): Promise<void> {
  try {
    await temporal.workflow.getHandle(campaignWorkflowId(campaignId)).signal(campaignChangedSignal);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}

/** The status an action leads to. */
export function statusAfter(action: CampaignAction, campaign: Pick<CampaignRow, 'schedule'>, now: Date): CampaignStatus {
  switch (action) {
    case 'pause':
      return 'paused';
    case 'cancel':
      return 'cancelled';
    default:
      return campaign.schedule.start_at && new Date(campaign.schedule.start_at) > now ? 'scheduled' : 'running';
  }
}

/**
 * Applies the action if the campaign is still in a status that allows it (compare-and-set, so
 * two requests at once do not both win). Returns false when it was not.
 */
export async function transition(db: Database, campaign: CampaignRow, action: CampaignAction, now = new Date()): Promise<boolean> {
  const status = statusAfter(action, campaign, now);
  const fields: Partial<CampaignRow> = { status, status_reason: null };
  if (action === 'resume') fields.resumed_at = now;
  if (action === 'cancel') fields.ended_at = now;
  if (action === 'start' && status === 'running') fields.started_at = now;
  const [changed] = await db.models.Campaign.update(fields, { where: { id: campaign.id, status: ALLOWED_FROM[action] } });
  return changed === 1;
}
