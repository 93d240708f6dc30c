/**
 * Flow nodes refer to the agent's transfer destinations by name (pre_action transfer_call) and
 * offer the transfer_call tool only when there are some (builtin_tools). Like tool ids, these
 * references are checked when saved, so a typo is a 422 instead of a call that cannot transfer;
 * and an agent change that would leave a node naming a removed destination is refused too.
 */
import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import type { PreAction } from '../../shared/flow';
import { TRANSFER_CALL } from '../../shared/transfer';
import { unprocessable } from '../errors';

export interface NodeTransferFields {
  node_key?: string;
  builtin_tools: readonly string[];
  pre_actions: readonly PreAction[];
}

const known = (names: readonly string[]) => (names.length ? `the agent has: ${names.join(', ')}` : 'the agent has no transfer_destinations');

/** 422 naming the first reference to a destination the agent does not have. */
export function assertNodeTransfers(node: NodeTransferFields, destinations: readonly string[], prefix: string): void {
  node.pre_actions.forEach((action, i) => {
    if (action.type === TRANSFER_CALL && !destinations.includes(action.destination)) {
      throw unprocessable(`${prefix}pre_actions.${i}.destination`, `unknown transfer destination "${action.destination}" (${known(destinations)})`);
    }
  });
  const builtin = node.builtin_tools.indexOf(TRANSFER_CALL);
  if (builtin >= 0 && destinations.length === 0) {
    throw unprocessable(`${prefix}builtin_tools.${builtin}`, 'transfer_call needs transfer_destinations on the agent: add them first');
  }
}

export const destinationNames = (list: ReadonlyArray<{ name: string }> | null | undefined) => (list ?? []).map((d) => d.name);

/** An agent's new destinations still cover what its stored nodes refer to. */
export async function assertDestinationsCoverNodes(db: Database, agentId: string, destinations: readonly string[], transaction: Transaction): Promise<void> {
  const nodes = (await db.models.FlowNode.findAll({
    attributes: ['node_key', 'builtin_tools', 'pre_actions'],
    where: { agent_id: agentId },
    raw: true,
    transaction,
  })) as unknown as NodeTransferFields[];
  for (const node of nodes) {
    for (const action of node.pre_actions) {
      if (action.type === TRANSFER_CALL && !destinations.includes(action.destination)) {
        throw unprocessable('transfer_destinations', `flow node "${node.node_key}" transfers to "${action.destination}" (a pre_action): keep that destination or change the node first`);
      }
    }
    if (destinations.length === 0 && node.builtin_tools.includes(TRANSFER_CALL)) {
      throw unprocessable('transfer_destinations', `flow node "${node.node_key}" offers transfer_call: keep a destination or change the node first`);
    }
  }
}
