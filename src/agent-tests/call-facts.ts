/**
 * What a call said and did, read from its recorded events: the turns (each caller line with the
 * agent's replies, tool calls and nodes entered in answer), the webhook tools' results, the
 * knowledge-base documents the replies were given passages of, and the tools a test left unmocked. Used to record a replay test and to evaluate an attempt.
 */
import type { CallEventRow } from '../db/models';
import { documentsUsed } from '../knowledge/reply-sources';
import type { ToolCallSeen, TurnRecord } from '../../workflows/test-definitions';

export interface CallFacts {
  turns: TurnRecord[];
  toolCalls: ToolCallSeen[];
  nodes: string[];
  agentTexts: string[];
  /** Knowledge-base documents the agent's replies were given passages of, in the order first used. */
  documents: string[];
  /** Successful webhook-tool results by tool name, in call order. */
  toolResults: Record<string, unknown[]>;
  /** Tools a test call asked for that had no mocked result. */
  unmockedTools: string[];
}

const asArgs = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

export function callFacts(events: CallEventRow[]): CallFacts {
  const turns: TurnRecord[] = [{ caller: null, replies: [], tool_calls: [], nodes: [] }];
  const toolResults: Record<string, unknown[]> = {};
  const unmocked = new Set<string>();
  for (const e of [...events].sort((a, b) => a.seq - b.seq)) {
    const data = e.data ?? {};
    const turn = turns[turns.length - 1]!;
    if (e.event_type === 'user_spoke' && typeof data.text === 'string' && !data.backchannel) {
      turns.push({ caller: data.text, replies: [], tool_calls: [], nodes: [] });
    } else if (e.event_type === 'agent_spoke' && typeof data.text === 'string') {
      turn.replies.push(data.text);
    } else if (e.event_type === 'tool_called' && typeof data.function === 'string') {
      turn.tool_calls.push({ name: data.function, args: asArgs(data.args) });
    } else if (e.event_type === 'node_entered' && typeof data.node_key === 'string') {
      turn.nodes.push(data.node_key);
    } else if (e.event_type === 'tool_result' && typeof data.function === 'string') {
      if (data.mocked === false) unmocked.add(data.function);
      // Webhook tools report a status code; flow functions and end_call do not.
      if ('status_code' in data && !data.error) (toolResults[data.function] ??= []).push(data.result ?? null);
    }
  }
  return {
    turns,
    toolCalls: turns.flatMap((t) => t.tool_calls),
    nodes: turns.flatMap((t) => t.nodes),
    agentTexts: turns.flatMap((t) => t.replies),
    documents: documentsUsed(events),
    toolResults,
    unmockedTools: [...unmocked],
  };
}
