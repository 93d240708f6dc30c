/**
 * Owners of agents and tools, for routes that declare `owned` (src/api/route.ts): members may
 * change only what they created; rows without an owner belong to the administrators.
 */
import type { Database } from '../db/database';
import type { RouteDef } from './route';

type Owned = NonNullable<RouteDef<undefined, undefined, any>['owned']>;

async function ownerOf(model: Database['models']['Agent'] | Database['models']['Tool'], id: string): Promise<string | null | undefined> {
  const row = await (model as Database['models']['Agent']).findByPk(id, { attributes: ['owner_id'] });
  return row ? ((row.get('owner_id') as string | null) ?? null) : undefined;
}

export const ownedAgent = (db: Database): Owned => ({ what: 'agent', owner: (params: { agent_id: string }) => ownerOf(db.models.Agent, params.agent_id) });
export const ownedTool = (db: Database): Owned => ({ what: 'tool', owner: (params: { tool_id: string }) => ownerOf(db.models.Tool, params.tool_id) });
export const ownedCampaign = (db: Database): Owned => ({
  what: 'campaign',
  owner: async (params: { campaign_id: string }) => {
    const row = await db.models.Campaign.findByPk(params.campaign_id, { attributes: ['owner_id'] });
    return row ? ((row.get('owner_id') as string | null) ?? null) : undefined;
  },
});
export const ownedMcpServer = (db: Database): Owned => ({
  what: 'MCP server',
  owner: async (params: { server_id: string }) => {
    const row = await db.models.McpServer.findByPk(params.server_id, { attributes: ['owner_id'] });
    return row ? ((row.get('owner_id') as string | null) ?? null) : undefined;
  },
});
export const ownedKnowledgeBase = (db: Database): Owned => ({
  what: 'knowledge base',
  owner: async (params: { knowledge_base_id: string }) => {
    const row = await db.models.KnowledgeBase.findByPk(params.knowledge_base_id, { attributes: ['owner_id'] });
    return row ? ((row.get('owner_id') as string | null) ?? null) : undefined;
  },
});
