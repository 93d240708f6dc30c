/**
 * Checks that configuration refers to tools that exist. The database has no foreign keys into the
 * JSON arrays, so this is where a typo in a tool id becomes a 422 instead of a failing call.
 */
import { Op, type Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import type { PreAction } from '../../shared/flow';
import { unprocessable } from '../errors';
import { assertMcpTools } from './mcp-refs';
import { assertKnowledgeBases } from './knowledge-refs';

export interface ToolRef {
  /** Request field holding the reference, e.g. `tool_ids.1`. */
  field: string;
  id: string;
}

/** Returns the names of the referenced tools by id; 422 naming the first unknown reference. */
export async function assertToolsExist(db: Database, refs: ToolRef[], transaction?: Transaction): Promise<Map<string, string>> {
  const ids = [...new Set(refs.map((r) => r.id))];
  if (ids.length === 0) return new Map();
  const rows = (await db.models.Tool.findAll({ attributes: ['id', 'name'], where: { id: { [Op.in]: ids } }, raw: true, transaction })) as unknown as Array<{
    id: string;
    name: string;
  }>;
  const names = new Map(rows.map((r) => [r.id, r.name]));
  const missing = refs.find((r) => !names.has(r.id));
  if (missing) throw unprocessable(missing.field, `unknown tool ${missing.id}`);
  return names;
}

export const listRefs = (ids: string[], field: string): ToolRef[] => ids.map((id, i) => ({ field: `${field}.${i}`, id }));

export interface NodeToolFields {
  tool_ids: string[];
  mcp_tools?: string[];
  knowledge_base_ids?: string[];
  pre_actions: PreAction[];
  functions: Array<{ name: string }>;
}

export function nodeToolRefs(node: Pick<NodeToolFields, 'tool_ids' | 'pre_actions'>, prefix: string): ToolRef[] {
  const refs = listRefs(node.tool_ids, `${prefix}tool_ids`);
  node.pre_actions.forEach((action, i) => {
    if (action.type === 'call_tool') refs.push({ field: `${prefix}pre_actions.${i}.tool_id`, id: action.tool_id });
  });
  return refs;
}

/**
 * The tools of a node exist, and no function shares a name with one of them: the LLM sees
 * functions and tools side by side, so a shared name would be ambiguous.
 */
export async function assertNodeTools(db: Database, node: NodeToolFields, prefix: string, transaction?: Transaction): Promise<void> {
  const names = await assertToolsExist(db, nodeToolRefs(node, prefix), transaction);
  await assertMcpTools(db, node.mcp_tools ?? [], `${prefix}mcp_tools`, transaction);
  await assertKnowledgeBases(db, node.knowledge_base_ids, `${prefix}knowledge_base_ids`, transaction);
  const toolNames = new Set(node.tool_ids.map((id) => names.get(id)));
  node.functions.forEach((fn, j) => {
    if (toolNames.has(fn.name)) throw unprocessable(`${prefix}functions.${j}.name`, `"${fn.name}" is also the name of a tool of this node`);
  });
}
