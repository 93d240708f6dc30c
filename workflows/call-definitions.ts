/**
 * The call workflow's interface: its input, the messages it accepts and the shapes it exchanges
 * with activities. Imported by the workflow, the activities and the API, so it holds types and
 * message definitions only (workflow-safe).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ChatMessage, FlowFunction, PreAction } from '../src/shared/flow';
import type { TransferDestination, TransferOutcome } from '../src/shared/transfer';
import type { PipelineSettings } from '../src/shared/catalog';
import type { ToolRow } from '../src/db/models/tools';
import type { AnalysisPlan, AnalysisRetryOptions, AnalysisStatus, CallAnalysis } from '../src/analysis/types';
import type { AnsweredBy, AnsweredByVerdict, VoicemailSettings } from '../src/voicemail/settings';
import type { GatewayEvent, VoiceTurnResult } from './gateway-messages';
import type { KnowledgeMode, KnowledgeOutcome, KnowledgeRequest } from '../src/shared/knowledge';

export type CallStatus = 'ringing' | 'in_progress' | 'completed' | 'failed' | 'no_answer';
export type EndReason = 'agent_ended' | 'user_ended' | 'idle_timeout' | 'error' | 'transferred' | 'voicemail';
export type Direction = 'inbound' | 'outbound';
/** How the call's audio reaches the platform: a phone stream, text (test channel), or the client. */
export type CallChannel = 'voice' | 'text' | 'manual';

/** A tool as the call uses it; headers stay encrypted, so no secret appears in workflow history. */
export type SnapshotTool = Omit<ToolRow, 'created_at' | 'updated_at'>;

/**
 * An MCP tool as the call uses it (src/calls/mcp-snapshot.ts): the LLM's function name for it, the
 * schema as normalised for the LLM, and the server's address with its headers still sealed.
 */
export interface SnapshotMcpTool {
  /** `<server>/<tool>`, as agents and nodes refer to it (and agent tests mock it). */
  ref: string;
  function_name: string;
  server: string;
  tool: string;
  description: string;
  parameters: Record<string, unknown>;
  url: string;
  headers_encrypted: string | null;
  timeout_secs: number;
}

export interface SnapshotNode {
  node_key: string;
  position: number;
  is_initial: boolean;
  is_terminal: boolean;
  role_messages: ChatMessage[];
  task_messages: ChatMessage[];
  functions: FlowFunction[];
  tool_ids: string[];
  /** MCP tools of the node (`server/tool`); absent in snapshots from before MCP. */
  mcp_tools?: string[];
  /** The node's own knowledge bases (absent: the agent's), docs/knowledge-base.md. */
  knowledge_base_ids?: string[];
  knowledge_mode?: KnowledgeMode;
  builtin_tools: string[];
  pre_actions: PreAction[];
}

/** The agent as it was when the call started; later edits do not affect a running call. */
export interface AgentSnapshot {
  id: string;
  name: string;
  version: number;
  prompt: string;
  greeting: string | null;
  llm_provider: string;
  llm_model: string;
  llm_settings: { temperature?: number; max_tokens?: number };
  stt: { provider: string; model: string | null; language: string; mode: string | null; settings: Record<string, unknown> };
  tts: { provider: string; model: string | null; voice: string | null; language: string | null; settings: Record<string, unknown> };
  pipeline: PipelineSettings;
  pre_call_tool_ids: string[];
  tool_ids: string[];
  /** Declared variables (name → {type, description}). */
  context_variables: Record<string, unknown>;
  webhook_url: string | null;
  webhook_events: string[];
  webhook_secret_encrypted: string | null;
  tools: SnapshotTool[];
  /** MCP tools the LLM may call (freeform agents), `server/tool`; absent before MCP. */
  mcp_tools?: string[];
  /** Every usable MCP tool the agent and its nodes refer to; absent before MCP. */
  mcp?: SnapshotMcpTool[];
  nodes: SnapshotNode[];
  /** Post-call analysis, defaults resolved; null: none. */
  analysis: AnalysisPlan | null;
  /** Where transfer_call may hand the caller. */
  transfer_destinations: TransferDestination[];
  /** Voicemail detection; null: none. */
  voicemail: VoicemailSettings | null;
  /** Knowledge bases (docs/knowledge-base.md); absent when neither the agent nor a node has any. */
  knowledge?: { knowledge_base_ids: string[]; mode: KnowledgeMode; timeout_ms: number };
}

export interface CallWorkflowInput {
  callId: string;
  agent: AgentSnapshot;
  phoneNumber: string;
  direction: Direction;
  channel: CallChannel;
  customParameters: Record<string, string | number>;
  initialStatus: 'ringing' | 'in_progress';
  /** Task queue of the media gateway instance holding the call's audio (voice calls). */
  gatewayTaskQueue?: string;
  options: {
    /** Seconds a ringing call may wait for an answer before it is `no_answer`. */
    ringTimeoutSecs: number;
    /** First retry of a failed webhook delivery; doubles up to 2 h, for at least 24 h. */
    webhookInitialRetrySecs: number;
    /** LLM provider errors are retried with backoff this many times before the call fails. */
    llmRetryMaxAttempts: number;
    llmRetryInitialSecs: number;
    /**
     * How long a media gateway carries a call while Temporal is unreachable (GATEWAY_OUTAGE_SECS);
     * gateway activities may wait this long (plus margin) to be picked up.
     */
    gatewayOutageSecs: number;
    /** Post-call analysis retries. */
    analysis: AnalysisRetryOptions;
  };
  /**
   * Whether the call's telephony vendor can hand the call over (its descriptor's
   * capabilities.transfer); absent (no transfer) on web and text calls.
   */
  /** `warm`: the vendor can also hold the caller and brief the human (absent on calls started before it existed). */
  transfer?: { supported: boolean; warm?: boolean; provider: string };
  /** Set when the workflow continued as new: the state carried over. */
  carried?: CarriedState;
  /** Agent tests (docs/agent-tests.md): tools answer from these results, no webhook is called. */
  test?: TestCallOptions;
}

export interface TestCallOptions {
  /** Results by tool name, in call order (the last one answers any further call). */
  toolResults: Record<string, unknown[]>;
  /** A tool without results gets an error result saying so. */
  unmocked: 'error';
}

export interface CarriedState {
  status: CallStatus;
  startTimeMs: number | null;
  nodeKey: string | null;
  variables: Record<string, unknown>;
  history: LlmMessage[];
  injectedContext: string[];
  nextSeq: number;
  totals: UsageTotals;
  lastUserActivityMs: number;
  gatewayTaskQueue: string | null;
  unwrittenEvents: CallEventRecord[];
  /** The last caller utterance number the gateway reported (voice calls; absent on text calls). */
  lastUtteranceSeq?: number;
}

export interface UsageTotals {
  llm_prompt_tokens: number;
  llm_completion_tokens: number;
  tts_characters: number;
}

/** Messages in the OpenAI chat format, which every supported LLM provider speaks. */
export type LlmMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: LlmToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface LlmToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface LlmToolSpec {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface LlmTurnRequest {
  callId: string;
  provider: string;
  model: string;
  temperature?: number;
  maxTokens?: number;
  messages: LlmMessage[];
  tools: LlmToolSpec[];
  /**
   * `auto` knowledge retrieval (docs/knowledge-base.md): whoever runs the request retrieves with
   * the caller's last words in `messages` and adds the passages before calling the LLM.
   */
  knowledge?: KnowledgeRequest;
}

export interface LlmTurnResult {
  content: string;
  toolCalls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>;
  usage: { prompt_tokens: number; completion_tokens: number };
  /** Measured in the activity (wall clock), never in workflow code. */
  ttfbMs: number | null;
  /** What `auto` retrieval did for this request (absent without one). */
  knowledge?: KnowledgeOutcome;
}

export interface ToolCallRequest {
  callId: string;
  toolCallId: string;
  tool: SnapshotTool;
  args: Record<string, unknown>;
}

export interface McpToolCallRequest {
  callId: string;
  toolCallId: string;
  tool: SnapshotMcpTool;
  args: Record<string, unknown>;
}

export interface ToolCallOutcome {
  status_code: number | null;
  response: unknown;
  duration_ms: number;
  error: string | null;
}

export interface CallEventRecord {
  seq: number;
  type: string;
  timestampMs: number;
  data: Record<string, unknown>;
}

export interface CallRecordPatch {
  status?: CallStatus;
  start_time?: number | null;
  end_time?: number | null;
  duration?: number | null;
  end_reason?: EndReason | null;
  current_node_key?: string | null;
  llm_prompt_tokens?: number;
  llm_completion_tokens?: number;
  tts_characters?: number;
  recording_path?: string | null;
  /** The media gateway (task queue) holding the call's audio. */
  gateway_id?: string | null;
  analysis_status?: AnalysisStatus | null;
  analysis?: CallAnalysis | null;
  analysis_success?: boolean | null;
  analysis_prompt_tokens?: number;
  analysis_completion_tokens?: number;
  answered_by?: AnsweredBy | null;
  /** A warm transfer's briefing summary. */
  transfer_summary?: string | null;
  /** Every file of the recording, in order: a stream that came back after a transfer has its own. */
  recording_parts?: string[];
}

export interface TextTurnResult {
  replies: string[];
  status: CallStatus;
  node_key: string | null;
}

export interface CallStateView {
  status: CallStatus;
  nodeKey: string | null;
  endReason: EndReason | null;
  greeting: string | null;
  turns: number;
}

/** A caller utterance from the gateway's STT (voice) — the audio-driven stream, so a signal. */
export interface UtteranceSignal {
  text: string;
  /**
   * True when the caller spoke over the agent and the gateway did NOT interrupt the agent (fewer
   * than min_words): the workflow records it as a backchannel, not a turn.
   */
  duringAgentSpeech?: boolean;
  /** Gateway events since its last report (voice calls), e.g. ttfb_metric for STT. */
  events?: GatewayEvent[];
  /** The gateway's number for this utterance (1, 2, … per call); absent from older gateways. */
  seq?: number;
  /**
   * The reply the gateway gave on its own while Temporal was unreachable (docs/call-lifecycle.md):
   * the caller heard it; the workflow records it (and runs the tools it asked for) as its own.
   */
  reply?: VoiceTurnResult;
  /** When the gateway had the utterance (epoch ms), for a reported `reply`. */
  timestampMs?: number;
}

/** A telephony provider's status, already mapped by the provider adapter. */
export interface TelephonyStatusSignal {
  status: 'ringing' | 'answered' | 'completed' | 'busy' | 'no_answer' | 'canceled' | 'failed';
  detail?: Record<string, unknown>;
}

export const utteranceSignal = defineSignal<[UtteranceSignal]>('utterance');
export const telephonyStatusSignal = defineSignal<[TelephonyStatusSignal]>('telephonyStatus');

/** How the vendor's dial of a transfer went (its dial callbacks, see docs/phone-operations.md#transfer-to-a-human). */
export interface TransferEventSignal {
  outcome: TransferOutcome;
  /** The vendor's own fields (dial status word, dialled call id, hang-up cause), snake_case. */
  detail?: Record<string, unknown>;
}
export const transferEventSignal = defineSignal<[TransferEventSignal]>('transferEvent');
/** Who answered (human, machine): from the vendor's AMD callback (API) or the gateway's detector. */
export const answeredBySignal = defineSignal<[AnsweredByVerdict]>('answeredBy');
/** Text test channel: one user message, answered when the agent's whole turn is done. */
export const sendTextUpdate = defineUpdate<TextTurnResult, [{ text: string }]>('sendText');
/** Waits until the greeting has been spoken (or skipped) and returns it. */
export const greetingUpdate = defineUpdate<string | null, []>('greeting');
/** Ends the call (POST /api/calls/end, or the caller hanging up). Returns the final status. */
export const endCallUpdate = defineUpdate<CallStatus, [{ reason: EndReason }]>('endCall');
/**
 * Waits until the call's final state (status, end time, duration) is in PostgreSQL and returns the
 * status. The workflow may go on afterwards (post-call analysis): callers wait for this, not its end.
 */
export const finalRecordUpdate = defineUpdate<CallStatus, []>('finalRecord');
export const stateQuery = defineQuery<CallStateView>('state');

export const callWorkflowId = (callId: string) => `call-${callId}`;

// The media gateway's side of a voice call (signals, query, activities): gateway-messages.ts.
export * from './gateway-messages';
