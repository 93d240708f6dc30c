/**
 * Export and import of agent bundles. Import runs in one transaction: tools and MCP servers are
 * matched by name (existing ones reused as they are, missing ones created: bundle-mcp.ts), every tool reference is remapped to a
 * real id, and the agent with its flow is created or, with `overwrite`, replaced in place.
 */
import { Op } from 'sequelize';
import { plain, plainAll, type Database } from '../../db/database';
import type { AgentRow, ToolRow } from '../../db/models';
import type { SecretBox } from '../../security/crypto';
import type { PreAction } from '../../shared/flow';
import { conflict, forbidden, unprocessable } from '../errors';
import type { AuthContext } from '../route';
import type { AgentCreate } from '../schemas/agent';
import { BUNDLE_VERSION, type BundleImport } from '../schemas/bundle';
import type { FlowNodeInput } from '../schemas/flow';
import { maskHeaders, sealHeaders, toolHeaders } from '../serializers/tool';
import { agentConfig, agentCounts, agentJson } from './agent-json';
import { findAgent } from './agent-rows';
import { assertAgentTools, insertAgent } from './agent-service';
import { listNodes, writeGraph } from './flow-service';
import { destinationNames } from './transfer-refs';
import { referencedToolIds } from '../../tools/tool-references';
import { recordAgentVersion } from '../../agent-tests/versions';
import { createTest, listTests } from '../agent-tests/test-service';
import { exportMcpServers, importMcpServers } from './bundle-mcp';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Tool header values are masked unless `includeSecrets` (an administrator asked for them explicitly). */
export async function exportBundle(db: Database, box: SecretBox, agentId: string, options: { includeSecrets: boolean }) {
  const agent = await findAgent(db, agentId);
  const nodes = await listNodes(db, agentId);
  const config = agentConfig(agent);
  const referenced = referencedToolIds(config, nodes);
  const tools = plainAll(await db.models.Tool.findAll({ where: { id: { [Op.in]: [...referenced] } }, order: [['name', 'ASC']] }));
  // A reference to a tool that no longer exists could not be imported anywhere; leave it out.
  const exists = new Set(tools.map((t) => t.id));
  const known = (ids: string[]) => ids.filter((id) => exists.has(id));
  return {
    version: BUNDLE_VERSION,
    agent: { ...config, tool_ids: known(config.tool_ids), pre_call_tool_ids: known(config.pre_call_tool_ids) },
    tools: tools.map((t) => ({
      id: t.id,
      name: t.name,
      description: t.description,
      // As GET /api/tools answers it (serializers/tool.ts): always an object schema.
      parameters: { type: 'object', ...t.parameters },
      webhook_url: t.webhook_url,
      webhook_method: t.webhook_method,
      headers: options.includeSecrets ? toolHeaders(box, t) : maskHeaders(toolHeaders(box, t)),
      timeout_secs: t.timeout_secs,
    })),
    mcp_servers: await exportMcpServers(db, box, [...config.mcp_tools, ...nodes.flatMap((n) => n.mcp_tools ?? [])], options.includeSecrets),
    flow_nodes: nodes.map((n) => ({
      node_key: n.node_key,
      position: n.position,
      is_initial: n.is_initial,
      is_terminal: n.is_terminal,
      role_messages: n.role_messages,
      task_messages: n.task_messages,
      functions: n.functions,
      tool_ids: known(n.tool_ids),
      mcp_tools: n.mcp_tools ?? [],
      // By reference: a bundle carries the bases' ids, not their documents (docs/knowledge-base.md).
      knowledge_base_ids: n.knowledge_base_ids ?? [],
      knowledge_mode: n.knowledge_mode ?? 'auto',
      builtin_tools: n.builtin_tools,
      pre_actions: (n.pre_actions as PreAction[]).filter((a) => a.type !== 'call_tool' || exists.has(a.tool_id)),
      position_xy: n.position_xy,
    })),
    tests: (await listTests(db, agentId)).map(({ id: _id, agent_id: _agent, created_at: _c, updated_at: _u, ...test }) => test),
  };
}

/** A header value as a masked export shows it (`****1234`): the secret itself is not in the bundle. */
const isMasked = (value: string) => /^\*{4}[^]{0,4}$/.test(value);

export async function importBundle(db: Database, box: SecretBox, bundle: BundleImport, actor: Pick<AuthContext, 'userId' | 'role'>) {
  const { Agent, Tool } = db.models;
  return db.sequelize.transaction(async (transaction) => {
    const existing = plain(await Agent.findOne({ where: { name: bundle.agent.name }, transaction, lock: transaction.LOCK.UPDATE }));
    if (existing && !bundle.overwrite) {
      throw conflict(`An agent named "${bundle.agent.name}" already exists; import with "overwrite": true to replace it`);
    }
    if (existing && actor.role !== 'admin' && existing.owner_id !== actor.userId) {
      throw forbidden('Only the owner of this agent or an administrator may overwrite it');
    }
    const toolsWithoutSecrets: string[] = [];

    const toolIdByRef = new Map<string, string>();
    const toolsCreated: string[] = [];
    const toolsReused: string[] = [];
    for (const [i, tool] of bundle.tools.entries()) {
      if (toolIdByRef.has(tool.id)) throw unprocessable(`tools.${i}.id`, `duplicate tool reference "${tool.id}"`);
      if ([...toolsCreated, ...toolsReused].includes(tool.name)) throw unprocessable(`tools.${i}.name`, `duplicate tool name "${tool.name}"`);
      const found = plain(await Tool.findOne({ where: { name: tool.name }, transaction }));
      if (found) {
        toolsReused.push(tool.name);
        toolIdByRef.set(tool.id, found.id);
        continue;
      }
      const { id: _ref, headers, ...fields } = tool;
      const known = Object.fromEntries(Object.entries(headers).filter(([, value]) => !isMasked(value)));
      if (Object.keys(known).length < Object.keys(headers).length) toolsWithoutSecrets.push(tool.name);
      const created = plain(
        await Tool.create({ ...fields, owner_id: actor.userId, headers_encrypted: sealHeaders(box, known) } as Partial<ToolRow>, { transaction }),
      );
      toolsCreated.push(tool.name);
      toolIdByRef.set(tool.id, created.id);
    }

    // A reference is a bundle-local tool id, or else the UUID of a tool of this installation.
    const remap = (ref: string, field: string) => {
      const id = toolIdByRef.get(ref) ?? (UUID.test(ref) ? ref : undefined);
      if (!id) throw unprocessable(field, `unknown tool reference "${ref}" (not the id of an entry of tools)`);
      return id;
    };
    const remapAll = (refs: string[], field: string) => [...new Set(refs.map((ref, i) => remap(ref, `${field}.${i}`)))];

    const config: AgentCreate = {
      ...bundle.agent,
      tool_ids: remapAll(bundle.agent.tool_ids, 'agent.tool_ids'),
      pre_call_tool_ids: remapAll(bundle.agent.pre_call_tool_ids, 'agent.pre_call_tool_ids'),
    };
    const mcp = await importMcpServers(db, box, bundle.mcp_servers, actor.userId, transaction);
    await assertAgentTools(db, config, 'agent.', transaction);
    const nodes: FlowNodeInput[] = bundle.flow_nodes.map((node, i) => ({
      ...node,
      tool_ids: remapAll(node.tool_ids, `flow_nodes.${i}.tool_ids`),
      pre_actions: node.pre_actions.map((a, j) =>
        a.type === 'call_tool' ? { ...a, tool_id: remap(a.tool_id, `flow_nodes.${i}.pre_actions.${j}.tool_id`) } : a,
      ),
    }));

    let agentId: string;
    if (existing) {
      agentId = existing.id;
      await Agent.update({ ...config, version: existing.version + 1 }, { where: { id: agentId }, transaction });
    } else {
      agentId = (await insertAgent(db, box, config, actor.userId, transaction)).row.id;
    }
    await writeGraph(db, agentId, nodes, 'flow_nodes', transaction, destinationNames(config.transfer_destinations));
    await recordAgentVersion(db, agentId, transaction);
    if (bundle.tests) {
      await db.models.AgentTest.destroy({ where: { agent_id: agentId }, transaction });
      for (const test of bundle.tests) await createTest(db, agentId, test, transaction);
    }

    const row = plain(await Agent.findByPk(agentId, { transaction })) as AgentRow;
    const counts = (await agentCounts(db, [agentId], transaction))(agentId);
    return {
      created: !existing,
      body: {
        agent: agentJson(row, counts),
        tools_created: toolsCreated,
        tools_reused: toolsReused,
        tools_without_secrets: toolsWithoutSecrets,
        ...mcp,
        flow_nodes_count: nodes.length,
        tests_count: bundle.tests?.length ?? 0,
      },
    };
  });
}
