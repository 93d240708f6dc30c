/**
 * Flow nodes of an agent. PUT /flow replaces the whole graph and must be complete and valid; the
 * single-node operations validate the node itself and allow an unfinished graph, whose remaining
 * problems GET /flow reports. Every change increments the agent's version.
 */
import type { Transaction } from 'sequelize';
import { plain, plainAll, type Database } from '../../db/database';
import type { FlowNodeRow } from '../../db/models';
import type { FlowFunction } from '../../shared/flow';
import { conflict, describeIssues, HttpError, notFound, unprocessable } from '../errors';
import { FlowNodeInputSchema, type FlowNodeInput, type FlowNodePatch } from '../schemas/flow';
import { NODE_ORDER, nodeJson } from './agent-json';
import { bumpVersion, findAgent, lockAgent } from './agent-rows';
import { assertValidGraph, graphIssues } from './flow-graph';
import { assertNodeTools } from './tool-refs';
import { assertNodeTransfers, destinationNames } from './transfer-refs';

export async function listNodes(db: Database, agentId: string, transaction?: Transaction): Promise<FlowNodeRow[]> {
  return plainAll(await db.models.FlowNode.findAll({ where: { agent_id: agentId }, order: NODE_ORDER, transaction }));
}

const asGraphNode = (n: { node_key: string; is_initial: boolean; functions: unknown[] }) => ({
  ...n,
  functions: n.functions as FlowFunction[],
});

export async function getFlow(db: Database, agentId: string) {
  await findAgent(db, agentId);
  const nodes = await listNodes(db, agentId);
  return { nodes: nodes.map(nodeJson), problems: graphIssues(nodes.map(asGraphNode)).map((i) => i.message) };
}

/**
 * Replaces all nodes of a locked agent with a complete graph (PUT /flow, bundle import). `prefix`
 * is the request field holding the nodes, for error messages. A node without `position` is placed
 * at its index in the list.
 */
export async function writeGraph(db: Database, agentId: string, nodes: FlowNodeInput[], prefix: string, transaction: Transaction, destinations: readonly string[]) {
  assertValidGraph(nodes, prefix);
  for (const [i, node] of nodes.entries()) {
    await assertNodeTools(db, node, `${prefix}.${i}.`, transaction);
    assertNodeTransfers(node, destinations, `${prefix}.${i}.`);
  }
  await db.models.FlowNode.destroy({ where: { agent_id: agentId }, transaction });
  await db.models.FlowNode.bulkCreate(
    nodes.map((node, i) => ({ ...node, agent_id: agentId, position: node.position ?? i })),
    { transaction },
  );
}

export async function replaceFlow(db: Database, agentId: string, nodes: FlowNodeInput[]) {
  return db.sequelize.transaction(async (transaction) => {
    const agent = await lockAgent(db, agentId, transaction);
    await writeGraph(db, agentId, nodes, 'nodes', transaction, destinationNames(agent.transfer_destinations));
    await bumpVersion(db, agentId, transaction);
    return { nodes: (await listNodes(db, agentId, transaction)).map(nodeJson), problems: [] as string[] };
  });
}

export async function getNode(db: Database, agentId: string, nodeKey: string) {
  await findAgent(db, agentId);
  const row = plain(await db.models.FlowNode.findOne({ where: { agent_id: agentId, node_key: nodeKey } }));
  if (!row) throw notFound('Flow node');
  return nodeJson(row);
}

const keyTaken = (key: string) => conflict(`A node with node_key "${key}" already exists in this agent`);

function assertSingleInitial(node: { node_key: string; is_initial: boolean }, others: FlowNodeRow[]) {
  const initial = others.find((n) => n.is_initial);
  if (node.is_initial && initial) {
    throw unprocessable('is_initial', `node "${initial.node_key}" is already the initial node; unset it first`);
  }
}

export async function createNode(db: Database, agentId: string, node: FlowNodeInput) {
  return db.sequelize.transaction(async (transaction) => {
    const agent = await lockAgent(db, agentId, transaction);
    const existing = await listNodes(db, agentId, transaction);
    if (existing.some((n) => n.node_key === node.node_key)) throw keyTaken(node.node_key);
    assertSingleInitial(node, existing);
    await assertNodeTools(db, node, '', transaction);
    assertNodeTransfers(node, destinationNames(agent.transfer_destinations), '');
    const position = node.position ?? Math.max(-1, ...existing.map((n) => n.position)) + 1;
    const row = plain(await db.models.FlowNode.create({ ...node, agent_id: agentId, position }, { transaction }));
    await bumpVersion(db, agentId, transaction);
    return nodeJson(row);
  });
}

const NODE_FIELDS = Object.keys(FlowNodeInputSchema.shape) as Array<keyof FlowNodeInput>;

/** A rename also moves the transitions that pointed at the old key, so the graph stays connected. */
export async function updateNode(db: Database, agentId: string, nodeKey: string, patch: FlowNodePatch) {
  return db.sequelize.transaction(async (transaction) => {
    const agent = await lockAgent(db, agentId, transaction);
    const nodes = await listNodes(db, agentId, transaction);
    const current = nodes.find((n) => n.node_key === nodeKey);
    if (!current) throw notFound('Flow node');
    const others = nodes.filter((n) => n !== current);
    const changes = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
    const candidate = Object.fromEntries(NODE_FIELDS.map((k) => [k, k in changes ? changes[k] : current[k as keyof FlowNodeRow]]));
    const parsed = FlowNodeInputSchema.safeParse(candidate);
    if (!parsed.success) throw new HttpError(422, describeIssues(parsed.error.issues));
    const node = parsed.data;
    if (others.some((n) => n.node_key === node.node_key)) throw keyTaken(node.node_key);
    assertSingleInitial(node, others);
    await assertNodeTools(db, node, '', transaction);
    assertNodeTransfers(node, destinationNames(agent.transfer_destinations), '');

    await db.models.FlowNode.update({ ...node, position: node.position ?? current.position }, { where: { id: current.id }, transaction });
    if (node.node_key !== nodeKey) {
      const updated = { ...current, ...node };
      for (const other of [...others, updated]) {
        const functions = (other.functions as FlowFunction[]).map((fn) => (fn.next_node_key === nodeKey ? { ...fn, next_node_key: node.node_key } : fn));
        if (JSON.stringify(functions) !== JSON.stringify(other.functions)) {
          await db.models.FlowNode.update({ functions }, { where: { id: other.id }, transaction });
        }
      }
    }
    await bumpVersion(db, agentId, transaction);
    return nodeJson(plain(await db.models.FlowNode.findByPk(current.id, { transaction }))!);
  });
}

export async function deleteNode(db: Database, agentId: string, nodeKey: string) {
  await db.sequelize.transaction(async (transaction) => {
    await lockAgent(db, agentId, transaction);
    const count = await db.models.FlowNode.destroy({ where: { agent_id: agentId, node_key: nodeKey }, transaction });
    if (!count) throw notFound('Flow node');
    await bumpVersion(db, agentId, transaction);
  });
}
