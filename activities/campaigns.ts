/**
 * The campaign workflow's activities (workflows/campaign-workflow.ts): a step (read outcomes,
 * decide the next attempts) and dialling one attempt. Both are safe to retry: decisions and
 * dials are keyed by the attempt's deterministic id (src/campaigns/attempt-id.ts).
 */
import { notifyCampaignStatus } from '../src/campaigns/campaign-webhooks';
import { Context } from '@temporalio/activity';
import { campaignTick, type TickResult } from '../src/campaigns/tick';
import { dialAttempt, type DialResult } from '../src/campaigns/dial';
import { loadTelephonySettings } from '../src/providers/telephony/settings-store';
import { resolveSecrets } from '../src/security/local-secrets';
import { heartbeating } from './heartbeating';
import type { ActivityDeps } from './index';

export function createCampaignActivities(deps: ActivityDeps) {
  let jwtSecret: string | undefined;
  return {
    async campaignStep(input: { campaignId: string; nowMs: number }): Promise<TickResult> {
      const settings = await loadTelephonySettings(deps.db, deps.box);
      const notifier = { temporal: Context.current().client, db: deps.db, taskQueue: deps.config.TEMPORAL_TASK_QUEUE, initialRetrySecs: deps.config.WEBHOOK_RETRY_INITIAL_SECS };
      return heartbeating(
        (async () => {
          const result = await campaignTick(deps.db, settings, input.campaignId, new Date(input.nowMs), deps.config.CAMPAIGN_POLL_MS);
          // This step's own change, or one made elsewhere whose webhook was not sent (the API died just after).
          await notifyCampaignStatus(notifier, input.campaignId);
          return result;
        })(),
      );
    },
    async campaignDial(input: { attemptId: string }): Promise<DialResult> {
      // The stream token's key: the same secret the API signs with (JWT_SECRET or DATA_DIR's).
      jwtSecret ??= resolveSecrets(deps.config).jwtSecret;
      const temporal = Context.current().client;
      // Heartbeats: a worker killed mid-dial is noticed in seconds, and the retry finds the ledger.
      return heartbeating(dialAttempt({ ...deps, temporal, jwtSecret }, input.attemptId));
    },
  };
}
