import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import type { AnalysisStatus, CallAnalysis } from '../../analysis/types';
import type { AnsweredBy } from '../../voicemail/settings';
import { jsonb, modelOptions, nullableInt, nullableText, requiredText, uuidPk, type Timestamps } from './common';

export type CallStatus = 'ringing' | 'in_progress' | 'completed' | 'failed' | 'no_answer';
export type EndReason = 'agent_ended' | 'user_ended' | 'idle_timeout' | 'error' | 'transferred' | 'voicemail';
export type Direction = 'inbound' | 'outbound';
export type CallChannel = 'voice' | 'web' | 'text' | 'manual';

export interface CallRow extends Timestamps {
  id: string;
  agent_id: string | null;
  agent_name: string;
  agent_version: number | null;
  phone_number: string;
  direction: Direction;
  status: CallStatus;
  provider: string | null;
  provider_call_sid: string | null;
  workflow_id: string;
  start_time: Date | null;
  end_time: Date | null;
  duration: number | null;
  recording_path: string | null;
  end_reason: EndReason | null;
  current_node_key: string | null;
  llm_prompt_tokens: number;
  llm_completion_tokens: number;
  tts_characters: number;
  metadata: Record<string, unknown>;
  context: Record<string, string | number>;
  /** How the audio reaches the platform: `voice` (phone stream), `web` (a browser's microphone), `text` (test channel), `manual` (client-managed). */
  channel: CallChannel;
  /** The media gateway (its task queue) holding the call's audio; null for calls without a stream. */
  gateway_id: string | null;
  /** Post-call analysis: null when the agent has none. */
  analysis_status: AnalysisStatus | null;
  analysis: CallAnalysis | null;
  /** `analysis.success`, in a column of its own for the indexed `success=` filter. */
  analysis_success: boolean | null;
  analysis_prompt_tokens: number;
  analysis_completion_tokens: number;
  /** Outbound calls whose agent detects voicemail: who answered (migration 0012). */
  answered_by: AnsweredBy | null;
  /** A warm transfer's briefing: the summary the agent spoke to the destination (migration 0022). */
  transfer_summary: string | null;
  /** Every file of the recording, in order (migration 0022); null on calls recorded before it. */
  recording_parts: string[] | null;
  /** The call's OpenTelemetry trace (32 hex digits) when tracing was on as it started (migration 0024). */
  trace_id: string | null;
}

export interface CallEventRow {
  call_id: string;
  seq: number;
  event_type: string;
  timestamp: Date;
  data: Record<string, unknown>;
}

export type CallModel = ModelStatic<Model<CallRow, Partial<CallRow>>>;
export type CallEventModel = ModelStatic<Model<CallEventRow, CallEventRow>>;

export function defineCallModels(sequelize: Sequelize) {
  const Call: CallModel = sequelize.define(
    'Call',
    {
      id: uuidPk(),
      agent_id: { type: DataTypes.UUID, allowNull: true },
      agent_name: requiredText(),
      agent_version: nullableInt(),
      phone_number: requiredText(),
      direction: requiredText(),
      status: requiredText(),
      provider: nullableText(),
      provider_call_sid: nullableText(),
      workflow_id: requiredText(),
      start_time: { type: DataTypes.DATE, allowNull: true },
      end_time: { type: DataTypes.DATE, allowNull: true },
      duration: { type: DataTypes.DOUBLE, allowNull: true },
      recording_path: nullableText(),
      end_reason: nullableText(),
      current_node_key: nullableText(),
      llm_prompt_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      llm_completion_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      tts_characters: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      metadata: jsonb({}),
      context: jsonb({}),
      channel: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'voice' },
      gateway_id: nullableText(),
      analysis_status: nullableText(),
      analysis: { type: DataTypes.JSONB, allowNull: true },
      analysis_success: { type: DataTypes.BOOLEAN, allowNull: true },
      analysis_prompt_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      analysis_completion_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      answered_by: nullableText(),
      transfer_summary: nullableText(),
      recording_parts: { type: DataTypes.JSONB, allowNull: true },
      trace_id: nullableText(),
    },
    { ...modelOptions, tableName: 'calls' },
  );
  const CallEvent: CallEventModel = sequelize.define(
    'CallEvent',
    {
      call_id: { type: DataTypes.UUID, primaryKey: true },
      seq: { type: DataTypes.INTEGER, primaryKey: true },
      event_type: requiredText(),
      timestamp: { type: DataTypes.DATE(6), allowNull: false },
      data: jsonb({}),
    },
    { tableName: 'call_events', timestamps: false, underscored: true },
  );
  return { Call, CallEvent };
}
