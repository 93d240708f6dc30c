/**
 * Shapes of flow-node content, shared by the API (validation) and the call workflow (execution).
 * Workflow-safe: types only.
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface FlowFunction {
  name: string;
  description: string;
  /** Node to move to when the LLM calls this function; absent = stay (data capture only). */
  next_node_key?: string | null;
  properties: Record<string, { type: string; description?: string }>;
  required: string[];
}

/** Actions run when a node is entered, in order. */
export type PreAction =
  /** Speak a fixed text (placeholders substituted) before the LLM's first reply in the node. */
  | { type: 'say'; text: string }
  /** Call a webhook tool and inject its result into the LLM context (event context_injected). */
  | { type: 'call_tool'; tool_id: string; args?: Record<string, unknown> }
  /** End the call (after any preceding `say`). */
  | { type: 'end_call' }
  /** Hand the caller to one of the agent's transfer_destinations (docs/phone-operations.md#transfer-to-a-human). */
  | { type: 'transfer_call'; destination: string };

export const PRE_ACTION_TYPES = ['say', 'call_tool', 'end_call', 'transfer_call'] as const;
