/**
 * One campaign, for as long as it runs (days, weeks): step (read outcomes, decide attempts), dial
 * the decided attempts spaced for calls_per_minute, then sleep on a durable timer until the next
 * step is due (calls in flight, a retry's interval, calling hours opening) or the campaign
 * changes. Contacts and their state live in PostgreSQL; the workflow only keeps time.
 *
 * Versioning: AUTO_UPGRADE, unlike the pinned call workflow — a campaign outlives any worker
 * version, so it moves to the newest one, and every change to this file goes patch → deprecate →
 * delete (docs/campaigns.md). Continue-as-new every `stepsPerRun` steps keeps its history short.
 */
import { condition, continueAsNew, proxyActivities, setHandler, setWorkflowOptions, sleep, workflowInfo } from '@temporalio/workflow';
import type { createCampaignActivities } from '../activities/campaigns';
import { campaignChangedSignal, type CampaignWorkflowInput } from './campaign-definitions';

type CampaignActivities = ReturnType<typeof createCampaignActivities>;

// Both heartbeat: a worker killed mid-activity is noticed within seconds, not at the timeout.
const { campaignStep } = proxyActivities<CampaignActivities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '5s',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});
// Placing a call waits up to 5 s for a refusal to be recorded; the provider request has its own timeout.
const { campaignDial } = proxyActivities<CampaignActivities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '5s',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});

const DEFAULT_STEPS_PER_RUN = 200;
const MIN_SPACING_MS = 1000;

export async function campaignWorkflow(input: CampaignWorkflowInput): Promise<string> {
  let changed = false;
  setHandler(campaignChangedSignal, () => {
    changed = true;
  });
  const steps = input.stepsPerRun ?? DEFAULT_STEPS_PER_RUN;
  for (let step = 0; step < steps; step++) {
    changed = false;
    const result = await campaignStep({ campaignId: input.campaignId, nowMs: Date.now() });
    if (result.finished) return result.status;
    let sleepMs = result.sleepMs;
    // Dials start spaced for calls_per_minute and run side by side (each waits on the provider).
    // Under a second apart they start together: a timer that short costs more than it spaces,
    // and the step already decides no more than a minute's calls_per_minute.
    let halt = false;
    const dials: Array<Promise<unknown>> = [];
    for (const [i, attemptId] of result.dials.entries()) {
      if (i > 0 && result.spacingMs >= MIN_SPACING_MS) await sleep(result.spacingMs);
      if (halt) break;
      dials.push(
        campaignDial({ attemptId }).then((dialled) => {
          // Our admission has no room (429/503): wait as it says; the attempt is dialled next step.
          if (dialled.kind === 'wait') sleepMs = Math.max(sleepMs, dialled.retryAfterSecs * 1000);
          if (dialled.kind === 'wait' || dialled.kind === 'stopped' || dialled.kind === 'held') halt = true;
        }),
      );
    }
    await Promise.all(dials);
    if (changed) continue;
    await condition(() => changed, sleepMs);
    if (workflowInfo().continueAsNewSuggested) break;
  }
  return continueAsNew<typeof campaignWorkflow>(input);
}

// Declared only on a versioned worker (a Worker Deployment Version): the server refuses a
// behaviour from an unversioned one, as the workers are until Worker Versioning is switched on.
// (An unversioned worker reports a build id with no deployment name.)
setWorkflowOptions(() => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: 'AUTO_UPGRADE' } : {}), campaignWorkflow);
