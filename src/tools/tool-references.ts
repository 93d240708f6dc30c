/**
 * Removes every reference to a tool from agent and flow-node configuration, so deleting a tool
 * cannot leave calls failing on a dangling id. Runs inside the caller's transaction, together with
 * the tool's own deletion.
 */
import type { Transaction } from 'sequelize';
import type { Database } from '../db/database';
import { plainAll } from '../db/database';
import type { PreAction } from '../shared/flow';

const without = (ids: string[], toolId: string) => ids.filter((id) => id !== toolId);

/** Every tool an agent uses: its tool_ids and pre_call_tool_ids, its nodes' tool_ids and call_tool pre-actions. */
export function referencedToolIds(
  agent: { tool_ids: string[]; pre_call_tool_ids: string[] },
  nodes: Array<{ tool_ids: string[]; pre_actions: unknown[] }>,
): Set<string> {
  const ids = new Set([...agent.tool_ids, ...agent.pre_call_tool_ids]);
  for (const node of nodes) {
    for (const id of node.tool_ids) ids.add(id);
    for (const action of node.pre_actions as PreAction[]) if (action?.type === 'call_tool') ids.add(action.tool_id);
  }
  return ids;
}

const referencesTool = (action: unknown, toolId: string) =>
  (action as PreAction)?.type === 'call_tool' && (action as { tool_id?: string }).tool_id === toolId;

/** Returns the ids of the agents whose configuration changed (their `version` is incremented). */
export async function removeToolReferences(db: Database, toolId: string, transaction: Transaction): Promise<string[]> {
  const { sequelize } = db;
  const { Agent, FlowNode } = db.models;
  // jsonb containment (@>) finds the rows without loading every agent; values go in as escaped
  // JSON literals.
  const idArray = sequelize.escape(JSON.stringify([toolId]));
  const callAction = sequelize.escape(JSON.stringify([{ type: 'call_tool', tool_id: toolId }]));

  const nodeMatch = `tool_ids @> ${idArray}::jsonb OR pre_actions @> ${callAction}::jsonb`;
  // Agents are locked before their nodes, the same order as agent updates, so the two cannot deadlock.
  const agents = plainAll(
    await Agent.findAll({
      where: sequelize.literal(
        `tool_ids @> ${idArray}::jsonb OR pre_call_tool_ids @> ${idArray}::jsonb OR id IN (SELECT agent_id FROM flow_nodes WHERE ${nodeMatch})`,
      ),
      transaction,
      lock: transaction.LOCK.UPDATE,
    }),
  );
  const nodes = plainAll(await FlowNode.findAll({ where: sequelize.literal(nodeMatch), transaction, lock: transaction.LOCK.UPDATE }));

  for (const node of nodes) {
    await FlowNode.update(
      { tool_ids: without(node.tool_ids, toolId), pre_actions: node.pre_actions.filter((a) => !referencesTool(a, toolId)) },
      { where: { id: node.id }, transaction },
    );
  }
  for (const agent of agents) {
    await Agent.update(
      {
        tool_ids: without(agent.tool_ids, toolId),
        pre_call_tool_ids: without(agent.pre_call_tool_ids, toolId),
        version: agent.version + 1,
      },
      { where: { id: agent.id }, transaction },
    );
  }
  return agents.map((a) => a.id);
}
