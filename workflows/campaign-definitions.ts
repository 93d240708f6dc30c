/** The campaign workflow's id, input and signal: shared by the API and the workflow (no I/O). */
import { defineSignal } from '@temporalio/workflow';

export const campaignWorkflowId = (campaignId: string) => `campaign-${campaignId}`;

export interface CampaignWorkflowInput {
  campaignId: string;
  /** Steps before the workflow continues as new (history stays bounded); default 200. */
  stepsPerRun?: number;
}

/**
 * The campaign's row changed (paused, resumed, cancelled, contacts added): take a step now. The
 * row in PostgreSQL is the truth, so a signal lost or doubled changes nothing but the timing.
 */
export const campaignChangedSignal = defineSignal<[]>('campaignChanged');
