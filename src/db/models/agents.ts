import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import type { AnalysisSettings } from '../../analysis/types';
import type { TransferDestination } from '../../shared/transfer';
import type { VoicemailSettings } from '../../voicemail/settings';
import type { KnowledgeMode } from '../../shared/knowledge';
import { jsonb, modelOptions, nullableText, requiredText, uuidPk, type Timestamps } from './common';

export interface AgentRow extends Timestamps {
  id: string;
  name: string;
  prompt: string;
  greeting: string | null;
  stt_provider: string;
  stt_model: string | null;
  stt_language: string;
  stt_mode: string | null;
  stt_settings: Record<string, unknown>;
  llm_provider: string;
  llm_model: string;
  llm_settings: Record<string, unknown>;
  tts_provider: string;
  tts_model: string | null;
  voice: string | null;
  tts_language: string | null;
  tts_settings: Record<string, unknown>;
  pipeline_settings: Record<string, unknown>;
  pre_call_tool_ids: string[];
  tool_ids: string[];
  /** MCP tools the LLM may call, as `server/tool` (migration 0021). */
  mcp_tools: string[];
  /** Knowledge bases the agent answers from, and how (migration 0023, docs/knowledge-base.md). */
  knowledge_base_ids: string[];
  knowledge_mode: KnowledgeMode;
  knowledge_timeout_ms: number;
  context_variables: Record<string, { type: string; description: string }>;
  webhook_url: string | null;
  webhook_events: string[];
  webhook_secret_encrypted: string | null;
  version: number;
  /** Post-call analysis; null = none. */
  analysis: AnalysisSettings | null;
  /** Voicemail detection on outbound calls (migration 0012); null = none. */
  voicemail: VoicemailSettings | null;
  /** The user who created it; null = the administrators' (created before ownership, or owner deleted). */
  owner_id: string | null;
  /** Where transfer_call may hand the caller (src/shared/transfer.ts). */
  transfer_destinations: TransferDestination[];
}

export interface FlowNodeRow extends Timestamps {
  id: string;
  agent_id: string;
  node_key: string;
  position: number;
  is_initial: boolean;
  is_terminal: boolean;
  role_messages: unknown[];
  task_messages: unknown[];
  functions: unknown[];
  tool_ids: string[];
  /** MCP tools offered in this node, as `server/tool` (migration 0021). */
  mcp_tools: string[];
  /** Knowledge bases of this node (migration 0023); empty: the agent's. */
  knowledge_base_ids: string[];
  knowledge_mode: KnowledgeMode;
  builtin_tools: string[];
  pre_actions: unknown[];
  position_xy: { x: number; y: number } | null;
}

export type AgentModel = ModelStatic<Model<AgentRow, Partial<AgentRow>>>;
export type FlowNodeModel = ModelStatic<Model<FlowNodeRow, Partial<FlowNodeRow>>>;

export function defineAgentModels(sequelize: Sequelize) {
  const Agent: AgentModel = sequelize.define(
    'Agent',
    {
      id: uuidPk(),
      name: requiredText(),
      prompt: requiredText(),
      greeting: nullableText(),
      stt_provider: requiredText(),
      stt_model: nullableText(),
      stt_language: requiredText(),
      stt_mode: nullableText(),
      stt_settings: jsonb({}),
      llm_provider: requiredText(),
      llm_model: requiredText(),
      llm_settings: jsonb({}),
      tts_provider: requiredText(),
      tts_model: nullableText(),
      voice: nullableText(),
      tts_language: nullableText(),
      tts_settings: jsonb({}),
      pipeline_settings: jsonb({}),
      pre_call_tool_ids: jsonb([]),
      tool_ids: jsonb([]),
      mcp_tools: jsonb([]),
      knowledge_base_ids: jsonb([]),
      knowledge_mode: { ...requiredText(), defaultValue: 'auto' },
      knowledge_timeout_ms: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 250 },
      context_variables: jsonb({}),
      webhook_url: nullableText(),
      webhook_events: jsonb([]),
      webhook_secret_encrypted: nullableText(),
      version: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
      analysis: { type: DataTypes.JSON, allowNull: true },
      voicemail: { type: DataTypes.JSON, allowNull: true },
      owner_id: { type: DataTypes.UUID, allowNull: true },
      transfer_destinations: jsonb([]),
    },
    { ...modelOptions, tableName: 'agents' },
  );
  const FlowNode: FlowNodeModel = sequelize.define(
    'FlowNode',
    {
      id: uuidPk(),
      agent_id: { type: DataTypes.UUID, allowNull: false },
      node_key: requiredText(),
      position: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      is_initial: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      is_terminal: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      role_messages: jsonb([]),
      task_messages: jsonb([]),
      functions: jsonb([]),
      tool_ids: jsonb([]),
      mcp_tools: jsonb([]),
      knowledge_base_ids: jsonb([]),
      knowledge_mode: { ...requiredText(), defaultValue: 'auto' },
      builtin_tools: jsonb([]),
      pre_actions: jsonb([]),
      position_xy: { type: DataTypes.JSONB, allowNull: true },
    },
    { ...modelOptions, tableName: 'flow_nodes' },
  );
  return { Agent, FlowNode };
}
