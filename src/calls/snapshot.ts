/**
 * Reads an agent with its flow nodes and every tool it references, as the immutable snapshot a
 * call runs on. Tool headers stay encrypted in the snapshot (it is visible in workflow history).
 */
import { Op, type Transaction, type WhereOptions } from 'sequelize';
import { plain, plainAll, type Database } from '../db/database';
import { analysisPlan } from '../analysis/plan';
import { PIPELINE_DEFAULTS } from '../shared/catalog';
import { referencedToolIds } from '../tools/tool-references';
import { loadMcpTools } from './mcp-snapshot';
import type { FlowFunction, PreAction, ChatMessage } from '../shared/flow';
import type { AgentRow } from '../db/models';
import type { AgentSnapshot } from '../../workflows/call-definitions';
import type { AgentProviderFields } from '../providers/agent-readiness';

/** The snapshot's speech and language providers, as the readiness check reads them. */
export function snapshotProviders(agent: AgentSnapshot): AgentProviderFields {
  return {
    stt_provider: agent.stt.provider,
    stt_model: agent.stt.model,
    stt_language: agent.stt.language,
    stt_mode: agent.stt.mode,
    stt_settings: agent.stt.settings,
    llm_provider: agent.llm_provider,
    tts_provider: agent.tts.provider,
  };
}

export async function loadAgentSnapshot(db: Database, agentName: string): Promise<AgentSnapshot | null> {
  return loadSnapshotWhere(db, { name: agentName });
}

/** The same by id, inside a transaction that changed the agent (agent-tests/versions.ts). */
export async function loadAgentSnapshotById(db: Database, agentId: string, transaction?: Transaction): Promise<AgentSnapshot | null> {
  return loadSnapshotWhere(db, { id: agentId }, transaction);
}

async function loadSnapshotWhere(db: Database, where: WhereOptions<AgentRow>, transaction?: Transaction): Promise<AgentSnapshot | null> {
  const agent = plain(await db.models.Agent.findOne({ where, transaction }));
  if (!agent) return null;
  const nodes = plainAll(
    await db.models.FlowNode.findAll({ where: { agent_id: agent.id }, order: [['position', 'ASC'], ['created_at', 'ASC']], transaction }),
  );
  const toolIds = referencedToolIds(agent, nodes);
  const mcpRefs = new Set([...(agent.mcp_tools ?? []), ...nodes.flatMap((n) => n.mcp_tools ?? [])]);
  const mcp = await loadMcpTools(db, mcpRefs, transaction);
  const tools = toolIds.size ? plainAll(await db.models.Tool.findAll({ where: { id: { [Op.in]: [...toolIds] } }, transaction })) : [];
  return {
    id: agent.id,
    name: agent.name,
    version: agent.version,
    prompt: agent.prompt,
    greeting: agent.greeting,
    llm_provider: agent.llm_provider,
    llm_model: agent.llm_model,
    llm_settings: agent.llm_settings as AgentSnapshot['llm_settings'],
    stt: { provider: agent.stt_provider, model: agent.stt_model, language: agent.stt_language, mode: agent.stt_mode, settings: agent.stt_settings },
    tts: { provider: agent.tts_provider, model: agent.tts_model, voice: agent.voice, language: agent.tts_language, settings: agent.tts_settings },
    pipeline: { ...PIPELINE_DEFAULTS, ...(agent.pipeline_settings as Partial<typeof PIPELINE_DEFAULTS>) },
    pre_call_tool_ids: agent.pre_call_tool_ids,
    tool_ids: agent.tool_ids,
    context_variables: agent.context_variables,
    webhook_url: agent.webhook_url,
    webhook_events: agent.webhook_events,
    webhook_secret_encrypted: agent.webhook_secret_encrypted,
    tools: tools.map(({ created_at: _created, updated_at: _updated, ...tool }) => tool),
    mcp_tools: agent.mcp_tools ?? [],
    mcp,
    analysis: analysisPlan(agent.analysis, agent),
    transfer_destinations: agent.transfer_destinations ?? [],
    voicemail: agent.voicemail ?? null,
    // Only for agents that use knowledge bases: every other snapshot stays as it was.
    ...(agent.knowledge_base_ids?.length || nodes.some((n) => n.knowledge_base_ids?.length)
      ? { knowledge: { knowledge_base_ids: agent.knowledge_base_ids, mode: agent.knowledge_mode, timeout_ms: agent.knowledge_timeout_ms } }
      : {}),
    nodes: nodes.map((n) => ({
      node_key: n.node_key,
      position: n.position,
      is_initial: n.is_initial,
      is_terminal: n.is_terminal,
      role_messages: n.role_messages as ChatMessage[],
      task_messages: n.task_messages as ChatMessage[],
      functions: n.functions as FlowFunction[],
      tool_ids: n.tool_ids,
      mcp_tools: n.mcp_tools ?? [],
      ...(n.knowledge_base_ids?.length ? { knowledge_base_ids: n.knowledge_base_ids, knowledge_mode: n.knowledge_mode } : {}),
      builtin_tools: n.builtin_tools,
      pre_actions: n.pre_actions as PreAction[],
    })),
  };
}
