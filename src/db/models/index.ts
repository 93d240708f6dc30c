import type { Sequelize } from 'sequelize';
import { defineAgentModels } from './agents';
import { defineAgentTestModels } from './agent-tests';
import { defineCallModels } from './calls';
import { defineCampaignModels } from './campaigns';
import { definePublishableKeyModels } from './publishable-keys';
import { defineTelephonyModels } from './telephony';
import { defineToolModels } from './tools';
import { defineMcpServerModels } from './mcp-servers';
import { defineKnowledgeModels } from './knowledge';
import { defineUserModels } from './users';

export function defineModels(sequelize: Sequelize) {
  return {
    ...defineUserModels(sequelize),
    ...defineAgentModels(sequelize),
    ...defineToolModels(sequelize),
    ...defineMcpServerModels(sequelize),
    ...defineTelephonyModels(sequelize),
    ...defineCallModels(sequelize),
    ...defineAgentTestModels(sequelize),
    ...definePublishableKeyModels(sequelize),
    ...defineCampaignModels(sequelize),
    ...defineKnowledgeModels(sequelize),
  };
}

export type Models = ReturnType<typeof defineModels>;
export * from './agents';
export * from './agent-tests';
export * from './calls';
export * from './campaigns';
export * from './publishable-keys';
export * from './telephony';
export * from './tools';
export * from './mcp-servers';
export * from './knowledge';
export * from './users';
