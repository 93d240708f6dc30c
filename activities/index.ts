/**
 * Activities are built by a factory that receives their dependencies, so the worker and the tests
 * wire them to their own database and configuration (no module-level state).
 */
import type { Config } from '../src/config';
import type { Database } from '../src/db/database';
import type { SecretBox } from '../src/security/crypto';
import type { Logger } from '../src/shared/logger';
import { createAnalysisActivities } from './analysis';
import { createAgentTestActivities } from './agent-tests';
import { createCampaignActivities } from './campaigns';
import { createKnowledgeActivities } from './knowledge';
import { createLlmActivities } from './llm';
import { createPersistenceActivities } from './persistence';
import { createTelephonyActivities } from './telephony';
import { createToolActivities } from './tools';
import { createWebhookActivities } from './webhooks';

export interface ActivityDeps {
  config: Config;
  db: Database;
  box: SecretBox;
  log: Logger;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createPersistenceActivities(deps),
    ...createLlmActivities(deps),
    ...createToolActivities(deps),
    ...createWebhookActivities(deps),
    ...createTelephonyActivities(deps),
    ...createAnalysisActivities(deps),
    ...createAgentTestActivities(deps),
    ...createCampaignActivities(deps),
    ...createKnowledgeActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
