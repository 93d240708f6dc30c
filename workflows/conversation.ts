/**
 * Builds what the LLM sees on each turn: the system prompt with the call context, the current
 * flow node's messages, and the tools offered (webhook tools, node functions, builtins).
 * Workflow-safe: pure functions of the snapshot and the conversation state.
 */
import { contextLine, substitute, type Variables } from '../src/shared/template';
import type { AgentSnapshot, LlmMessage, LlmToolSpec, SnapshotMcpTool, SnapshotNode, SnapshotTool } from './call-definitions';
import { transferToolSpec } from './transfer-tool';
import { TRANSFER_CALL } from '../src/shared/transfer';
import { DTMF_DIGITS, MAX_DTMF_DIGITS } from '../src/shared/dtmf-keys';

export const END_CALL = 'end_call';

const END_CALL_SPEC: LlmToolSpec = {
  type: 'function',
  function: {
    name: END_CALL,
    description: 'End the phone call. Call this after saying goodbye, when the conversation is complete.',
    parameters: { type: 'object', properties: {}, required: [] },
  },
};

export const SEND_DTMF = 'send_dtmf';

const SEND_DTMF_SPEC: LlmToolSpec = {
  type: 'function',
  function: {
    name: SEND_DTMF,
    description:
      'Press keys on the phone keypad, e.g. to choose an option in an automated phone menu ("press 2 for billing") or enter a number it asks for. ' +
      'Only for automated menus, never when talking to a person.',
    parameters: {
      type: 'object',
      properties: { digits: { type: 'string', description: 'the keys to press, in order: 0-9, * and #; w waits half a second' } },
      required: ['digits'],
    },
  },
};

/** The keys of a send_dtmf call, or null when they are not keys (spaces and dashes are dropped). */
export function dtmfDigits(args: Record<string, unknown>): string | null {
  const raw = typeof args.digits === 'number' ? String(args.digits) : args.digits;
  if (typeof raw !== 'string') return null;
  const digits = raw.replace(/[\s,-]/g, '');
  return DTMF_DIGITS.test(digits) && digits.length <= MAX_DTMF_DIGITS ? digits : null;
}

function mcpSpec(tool: SnapshotMcpTool): LlmToolSpec {
  return { type: 'function', function: { name: tool.function_name, description: tool.description, parameters: tool.parameters } };
}

/** The MCP tools of these references that the snapshot could resolve (server and tool still usable). */
function mcpSpecs(agent: AgentSnapshot, refs: string[] | undefined): LlmToolSpec[] {
  const byRef = new Map((agent.mcp ?? []).map((t) => [t.ref, t]));
  return (refs ?? []).flatMap((ref) => (byRef.has(ref) ? [mcpSpec(byRef.get(ref)!)] : []));
}

function toolSpec(tool: SnapshotTool): LlmToolSpec {
  return {
    type: 'function',
    function: {
      name: tool.name,
      description: tool.description,
      parameters: { type: 'object', properties: tool.parameters.properties ?? {}, required: tool.parameters.required ?? [] },
    },
  };
}

export interface ConversationState {
  nodeKey: string | null;
  variables: Variables;
  /** Contexts injected by pre-call tools and call_tool pre-actions. */
  injectedContext: string[];
  /** user / assistant / tool messages across the whole call. */
  history: LlmMessage[];
}

export function findNode(agent: AgentSnapshot, key: string | null): SnapshotNode | undefined {
  return key === null ? undefined : agent.nodes.find((n) => n.node_key === key);
}

export function initialNode(agent: AgentSnapshot): SnapshotNode | undefined {
  return agent.nodes.find((n) => n.is_initial) ?? agent.nodes[0];
}

/**
 * The system messages of the current turn: the prompt (substituted at call start), the call
 * context, injected context, then the node's messages substituted with the current variables.
 */
export function systemMessages(prompt: string, agent: AgentSnapshot, state: ConversationState, customParameters: Variables): LlmMessage[] {
  const parts = [prompt];
  if (Object.keys(customParameters).length) parts.push(`Call context: ${contextLine(customParameters)}`);
  for (const ctx of state.injectedContext) parts.push(ctx);
  const messages: LlmMessage[] = [{ role: 'system', content: parts.join('\n\n') }];
  const node = findNode(agent, state.nodeKey);
  if (node) {
    for (const m of [...node.role_messages, ...node.task_messages]) {
      messages.push({ role: m.role === 'user' ? 'user' : 'system', content: substitute(m.content, state.variables) });
    }
  }
  return messages;
}

/** What of the call decides builtin tools (absent: none beyond end_call for freeform agents). */
export interface ToolCallContext {
  direction: string;
  channel: string;
  /** The call can be handed over (the agent has destinations, the call's vendor can transfer). */
  transferable?: boolean;
}

/**
 * The tools offered in the current state: freeform = agent tools + end_call (+ send_dtmf on an
 * outbound phone call: the agent may meet a company's phone menu; + transfer_call when
 * transferable); flow = the node's.
 */
export function offeredTools(agent: AgentSnapshot, state: ConversationState, call?: ToolCallContext): LlmToolSpec[] {
  const byId = new Map(agent.tools.map((t) => [t.id, t]));
  const node = findNode(agent, state.nodeKey);
  const transfer = call?.transferable && agent.transfer_destinations.length ? [transferToolSpec(agent.transfer_destinations)] : [];
  if (!node) {
    const keypad = call?.direction === 'outbound' && call.channel === 'voice' ? [SEND_DTMF_SPEC] : [];
    return [
      ...agent.tool_ids.flatMap((id) => (byId.has(id) ? [toolSpec(byId.get(id)!)] : [])),
      ...mcpSpecs(agent, agent.mcp_tools),
      END_CALL_SPEC,
      ...keypad,
      ...transfer,
    ];
  }
  const specs: LlmToolSpec[] = node.functions.map((f) => ({
    type: 'function',
    function: {
      name: f.name,
      description: substitute(f.description, state.variables),
      parameters: { type: 'object', properties: f.properties ?? {}, required: f.required ?? [] },
    },
  }));
  for (const id of node.tool_ids) if (byId.has(id)) specs.push(toolSpec(byId.get(id)!));
  specs.push(...mcpSpecs(agent, node.mcp_tools));
  if (node.builtin_tools.includes(END_CALL) || node.is_terminal) specs.push(END_CALL_SPEC);
  if (node.builtin_tools.includes(SEND_DTMF)) specs.push(SEND_DTMF_SPEC);
  if (node.builtin_tools.includes(TRANSFER_CALL)) specs.push(...transfer);
  return specs;
}

/** Arguments sent to a webhook tool: call identity, then custom parameters, then the LLM's own. */
export function toolArguments(
  llmArgs: Record<string, unknown>,
  customParameters: Variables,
  call: { phoneNumber: string; direction: string },
): Record<string, unknown> {
  return { phone_number: call.phoneNumber, direction: call.direction, ...customParameters, ...llmArgs };
}

/** Tool results are given to the LLM as text: the whole body, stringified. */
export function toolResultText(outcome: { response: unknown; error: string | null; status_code: number | null }): string {
  if (outcome.error) {
    const body = outcome.response === null || outcome.response === undefined ? '' : ` Response: ${stringify(outcome.response)}`;
    return `Error: the tool failed (${outcome.error}).${body} Tell the caller you could not complete this right now.`;
  }
  return stringify(outcome.response);
}

export function stringify(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * Keeps the most recent messages when a long call continues as new. The cut never starts inside a
 * tool exchange (a tool message must follow the assistant message that asked for it).
 */
export function trimHistory(history: LlmMessage[], keep: number): LlmMessage[] {
  if (history.length <= keep) return history;
  let start = history.length - keep;
  while (start < history.length && (history[start]!.role === 'tool' || history[start]!.role === 'assistant')) start++;
  return history.slice(start);
}
