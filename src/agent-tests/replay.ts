/**
 * Replay tests: a real call turned into a test (the caller's turns, what the agent said and did,
 * its tools' results), and the turn-by-turn diff of a replay against the recording.
 */
import type { CallEventRow, CallRow } from '../db/models';
import type { EndReason } from '../../workflows/call-definitions';
import type { Expectation, Recording, ToolCallSeen, TurnRecord } from '../../workflows/test-definitions';
import { callFacts, type CallFacts } from './call-facts';
import { sameCalls } from './expectations';

export const REPLAY_DEFAULT_EXPECTATIONS: Expectation[] = [{ type: 'same_tools' }, { type: 'same_nodes' }, { type: 'same_end' }];

export function recordingOf(call: CallRow, events: CallEventRow[]): Recording {
  const facts = callFacts(events);
  return {
    call_id: call.id,
    agent_version: call.agent_version,
    direction: call.direction,
    turns: facts.turns,
    end_reason: (call.end_reason as EndReason | null) ?? null,
    tool_results: facts.toolResults,
  };
}

export interface DiffTurn {
  /** 0: before the caller spoke (greeting, pre-call tools). */
  turn: number;
  caller: string | null;
  recorded: { replies: string[]; tool_calls: ToolCallSeen[] };
  replayed: { replies: string[]; tool_calls: ToolCallSeen[] } | null;
  replies_changed: boolean;
  tools_changed: boolean;
}

const normal = (text: string) => text.trim().replace(/\s+/g, ' ').toLowerCase();
const sameReplies = (a: string[], b: string[]) => JSON.stringify(a.map(normal)) === JSON.stringify(b.map(normal));
const shape = (t: TurnRecord) => ({ replies: t.replies, tool_calls: t.tool_calls });

/** Turn i of the replay answers the same caller line as turn i of the recording. */
export function replayDiff(recording: Recording, replay: CallFacts): { turns: DiffTurn[]; changed_turns: number } {
  const turns = recording.turns.map((before, i): DiffTurn => {
    const after = replay.turns[i];
    return {
      turn: i,
      caller: before.caller,
      recorded: shape(before),
      replayed: after ? shape(after) : null,
      replies_changed: !after || !sameReplies(before.replies, after.replies),
      tools_changed: !after || !sameCalls(before.tool_calls, after.tool_calls),
    };
  });
  return { turns, changed_turns: turns.filter((t) => t.replies_changed || t.tools_changed).length };
}
