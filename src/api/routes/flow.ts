import { z } from 'zod';
import type { ApiContext } from '../context';
import { route, uuidParam } from '../route';
import { findAgent } from '../agents/agent-rows';
import { ownedAgent } from '../ownership';
import { nodeJson } from '../agents/agent-json';
import { createNode, deleteNode, getFlow, getNode, listNodes, replaceFlow, updateNode } from '../agents/flow-service';
import { FlowNodeInputSchema, FlowNodePatchSchema, FlowNodeRecordSchema, FlowPutSchema, FlowResponseSchema, NodeKey } from '../schemas/flow';

const TAG = 'Flow nodes';
const agentIdParam = uuidParam('agent_id');
const nodeParams = z.object({ agent_id: z.uuid({ error: 'must be a UUID' }), node_key: NodeKey });

export function flowRoutes(ctx: ApiContext) {
  const { db } = ctx;
  const owned = ownedAgent(db);
  return [
    route({
      method: 'get',
      path: '/api/agents/{agent_id}/flow',
      operationId: 'getAgentFlow',
      tag: TAG,
      access: 'member',
      summary: "Get an agent's flow graph",
      description:
        'Nodes ordered by position, then creation. `problems` lists what keeps the graph from running (no initial node, a function pointing at a missing node, nodes unreachable from the initial one); it is empty for a complete graph.',
      params: agentIdParam,
      responses: { 200: { description: 'Nodes and graph problems', schema: FlowResponseSchema }, 404: { description: 'No such agent' } },
      async handler({ params }) {
        return { status: 200, body: await getFlow(db, params.agent_id as string) };
      },
    }),
    route({
      method: 'put',
      path: '/api/agents/{agent_id}/flow',
      operationId: 'replaceAgentFlow',
      tag: TAG,
      access: 'member',
      summary: 'Replace the whole flow graph',
      description:
        'Atomically replaces all nodes. The graph must be complete: unique node_keys, exactly one initial node (unless `nodes` is empty, which makes the agent freeform), every `next_node_key` naming a node, every node reachable from the initial one, existing tools in `tool_ids` and `call_tool` pre-actions. A node without `position` gets its index in the list. Increments the agent\'s `version`.',
      params: agentIdParam,
      owned,
      body: FlowPutSchema,
      responses: {
        200: { description: 'The stored graph', schema: FlowResponseSchema },
        404: { description: 'No such agent' },
        422: { description: 'Invalid node or graph; `detail` names the field (e.g. nodes.1.functions.0.next_node_key)' },
      },
      async handler({ params, body }) {
        return { status: 200, body: await replaceFlow(db, params.agent_id as string, body.nodes) };
      },
    }),
    route({
      method: 'get',
      path: '/api/agents/{agent_id}/nodes',
      operationId: 'listFlowNodes',
      tag: TAG,
      access: 'member',
      summary: 'List flow nodes',
      params: agentIdParam,
      responses: { 200: { description: 'Nodes by position', schema: z.array(FlowNodeRecordSchema) }, 404: { description: 'No such agent' } },
      async handler({ params }) {
        await findAgent(db, params.agent_id as string);
        return { status: 200, body: (await listNodes(db, params.agent_id as string)).map(nodeJson) };
      },
    }),
    route({
      method: 'post',
      path: '/api/agents/{agent_id}/nodes',
      operationId: 'createFlowNode',
      tag: TAG,
      access: 'member',
      summary: 'Add a flow node',
      description:
        'Validates the node itself (fields, existing tools, builtin tools, at most one initial node per agent). Transitions to nodes not yet created are allowed; GET /flow reports them until the graph is complete. Without `position` the node goes last. Increments the agent\'s `version`.',
      params: agentIdParam,
      owned,
      body: FlowNodeInputSchema,
      responses: {
        201: { description: 'The created node', schema: FlowNodeRecordSchema },
        404: { description: 'No such agent' },
        409: { description: 'The agent already has a node with this node_key' },
        422: { description: 'Invalid field, unknown tool, or a second initial node' },
      },
      async handler({ params, body }) {
        return { status: 201, body: await createNode(db, params.agent_id as string, body) };
      },
    }),
    route({
      method: 'get',
      path: '/api/agents/{agent_id}/nodes/{node_key}',
      operationId: 'getFlowNode',
      tag: TAG,
      access: 'member',
      summary: 'Get a flow node',
      params: nodeParams,
      responses: { 200: { description: 'The node', schema: FlowNodeRecordSchema }, 404: { description: 'No such agent or node' } },
      async handler({ params }) {
        return { status: 200, body: await getNode(db, params.agent_id, params.node_key) };
      },
    }),
    route({
      method: 'patch',
      path: '/api/agents/{agent_id}/nodes/{node_key}',
      operationId: 'updateFlowNode',
      tag: TAG,
      access: 'member',
      summary: 'Update a flow node (partial)',
      description:
        'Send only the fields to change; arrays are replaced. Renaming `node_key` also updates every function of the agent whose `next_node_key` pointed at the old key. Increments the agent\'s `version`.',
      params: nodeParams,
      owned,
      body: FlowNodePatchSchema,
      responses: {
        200: { description: 'The updated node', schema: FlowNodeRecordSchema },
        404: { description: 'No such agent or node' },
        409: { description: 'The new node_key is taken' },
        422: { description: 'Invalid field, unknown tool, or a second initial node' },
      },
      async handler({ params, body }) {
        return { status: 200, body: await updateNode(db, params.agent_id, params.node_key, body) };
      },
    }),
    route({
      method: 'delete',
      path: '/api/agents/{agent_id}/nodes/{node_key}',
      operationId: 'deleteFlowNode',
      tag: TAG,
      access: 'member',
      summary: 'Delete a flow node',
      description: 'Transitions pointing at the node remain and are reported by GET /flow until fixed. Increments the agent\'s `version`.',
      params: nodeParams,
      owned,
      responses: { 204: { description: 'Deleted' }, 404: { description: 'No such agent or node' } },
      async handler({ params }) {
        await deleteNode(db, params.agent_id, params.node_key);
        return { status: 204 };
      },
    }),
  ];
}
