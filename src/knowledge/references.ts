/**
 * Removes a deleted knowledge base from the agents and flow nodes that answer from it, in the
 * deletion's transaction, as deleting a tool does (src/tools/tool-references.ts): no call starts
 * with a base that is gone. Changed agents get a new version.
 */
import type { Transaction } from 'sequelize';
import type { Database } from '../db/database';
import { plainAll } from '../db/database';

/** Returns the ids of the agents whose configuration changed. */
export async function removeKnowledgeReferences(db: Database, knowledgeBaseId: string, transaction: Transaction): Promise<string[]> {
  const { sequelize } = db;
  const { Agent, FlowNode } = db.models;
  const uses = (table: string) => `${table}.knowledge_base_ids @> ${sequelize.escape(JSON.stringify([knowledgeBaseId]))}::jsonb`;
  // Agents are locked before their nodes, as in agent updates, so the two cannot deadlock.
  const agents = plainAll(
    await Agent.findAll({
      where: sequelize.literal(`${uses('"Agent"')} OR id IN (SELECT agent_id FROM flow_nodes WHERE ${uses('flow_nodes')})`),
      transaction,
      lock: transaction.LOCK.UPDATE,
    }),
  );
  const without = (ids: string[]) => ids.filter((id) => id !== knowledgeBaseId);
  const nodes = plainAll(await FlowNode.findAll({ where: sequelize.literal(uses('"FlowNode"')), transaction, lock: transaction.LOCK.UPDATE }));
  for (const node of nodes) await FlowNode.update({ knowledge_base_ids: without(node.knowledge_base_ids) }, { where: { id: node.id }, transaction });
  for (const agent of agents) {
    await Agent.update({ knowledge_base_ids: without(agent.knowledge_base_ids), version: agent.version + 1 }, { where: { id: agent.id }, transaction });
  }
  return agents.map((a) => a.id);
}
