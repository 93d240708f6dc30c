/**
 * Removes the `server/tool` references of a deleted MCP server from agents and flow nodes, in the
 * deletion's transaction, as deleting a webhook tool does (tool-references.ts): no call starts
 * with a reference to a server that is gone.
 */
import type { Transaction } from 'sequelize';
import type { Database } from '../db/database';
import { plainAll } from '../db/database';

const ofServer = (refs: string[], server: string) => refs.filter((r) => r.split('/', 1)[0] !== server);

/** Returns the ids of the agents whose configuration changed (their `version` is incremented). */
export async function removeMcpReferences(db: Database, server: string, transaction: Transaction): Promise<string[]> {
  const { sequelize } = db;
  const { Agent, FlowNode } = db.models;
  // split_part, not LIKE: server names contain `_`, a LIKE wildcard.
  const uses = (table: string) =>
    `EXISTS (SELECT 1 FROM jsonb_array_elements_text(${table}.mcp_tools) AS r(ref) WHERE split_part(r.ref, '/', 1) = ${sequelize.escape(server)})`;
  // Agents are locked before their nodes, as in agent updates, so the two cannot deadlock.
  const agents = plainAll(
    await Agent.findAll({
      where: sequelize.literal(`${uses('"Agent"')} OR id IN (SELECT agent_id FROM flow_nodes WHERE ${uses('flow_nodes')})`),
      transaction,
      lock: transaction.LOCK.UPDATE,
    }),
  );
  const nodes = plainAll(await FlowNode.findAll({ where: sequelize.literal(uses('"FlowNode"')), transaction, lock: transaction.LOCK.UPDATE }));
  for (const node of nodes) await FlowNode.update({ mcp_tools: ofServer(node.mcp_tools, server) }, { where: { id: node.id }, transaction });
  for (const agent of agents) {
    await Agent.update({ mcp_tools: ofServer(agent.mcp_tools, server), version: agent.version + 1 }, { where: { id: agent.id }, transaction });
  }
  return agents.map((a) => a.id);
}
