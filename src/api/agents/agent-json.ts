/** The API forms of an agent and a flow node, and the per-agent counters shown with agents. */
import { col, fn, literal, Op, type Transaction } from 'sequelize';
import type { Literal } from 'sequelize/types/utils';
import type { Database } from '../../db/database';
import type { AgentRow, FlowNodeRow } from '../../db/models';
import { analysisEnabled } from '../../analysis/plan';
import { providerProblems } from '../../providers/agent-readiness';
import type { ProviderConfig } from '../../providers/vendor';
import { PIPELINE_DEFAULTS } from '../../shared/catalog';
import { apiTimestamp } from '../../shared/time';
import { AGENT_CONFIG_FIELDS, type AgentCreate } from '../schemas/agent';

export interface AgentCounts {
  total_calls: number;
  flow_nodes_count: number;
}

/** The stored configuration in request form (what POST accepts and a bundle carries). */
export function agentConfig(row: AgentRow): AgentCreate {
  const config = Object.fromEntries(AGENT_CONFIG_FIELDS.map((k) => [k, row[k as keyof AgentRow]])) as unknown as AgentCreate;
  return { ...config, pipeline_settings: { ...PIPELINE_DEFAULTS, ...row.pipeline_settings } };
}

export function agentJson(row: AgentRow, counts: AgentCounts) {
  return {
    id: row.id,
    ...agentConfig(row),
    analysis: row.analysis ? { ...row.analysis, enabled: analysisEnabled(row.analysis) } : null,
    version: row.version,
    created_at: apiTimestamp(row.created_at)!,
    updated_at: apiTimestamp(row.updated_at)!,
    ...counts,
    owner_id: row.owner_id ?? null,
  };
}

/** The agent as the API shows it: with `warnings` about providers this installation cannot run. */
export function withWarnings<T extends ReturnType<typeof agentJson>>(agent: T, config: ProviderConfig): T & { warnings: string[] } {
  return { ...agent, warnings: providerProblems(agent, config) };
}

export function nodeJson(row: FlowNodeRow) {
  return { ...row, created_at: apiTimestamp(row.created_at)!, updated_at: apiTimestamp(row.updated_at)! };
}

export const NODE_ORDER: Array<[string, string]> = [
  ['position', 'ASC'],
  ['created_at', 'ASC'],
  ['node_key', 'ASC'],
];

// Calls of agent test runs (docs/agent-tests.md) are not counted as the agent's calls.
const NOT_A_TEST_CALL = literal(`(metadata->>'test_run_id') IS NULL`);

async function countBy(model: Database['models']['Call'] | Database['models']['FlowNode'], agentIds: string[] | null, transaction?: Transaction, only?: Literal) {
  const rows = (await (model as Database['models']['Call']).findAll({
    attributes: ['agent_id', [fn('COUNT', col('id')), 'n']],
    where: {
      agent_id: agentIds ? { [Op.in]: agentIds } : { [Op.ne]: null },
      ...(only ? { [Op.and]: [only] } : {}),
    },
    group: ['agent_id'],
    raw: true,
    transaction,
  })) as unknown as Array<{ agent_id: string; n: string }>;
  return new Map(rows.map((r) => [r.agent_id, Number(r.n)]));
}

/** Calls and flow nodes per agent; `agentIds` null = all agents. */
export async function agentCounts(db: Database, agentIds: string[] | null, transaction?: Transaction) {
  const [calls, nodes] = await Promise.all([
    countBy(db.models.Call, agentIds, transaction, NOT_A_TEST_CALL),
    countBy(db.models.FlowNode, agentIds, transaction),
  ]);
  return (id: string): AgentCounts => ({ total_calls: calls.get(id) ?? 0, flow_nodes_count: nodes.get(id) ?? 0 });
}
