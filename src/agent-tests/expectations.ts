/**
 * Deterministic expectations of an agent test, checked against what the attempt's call did
 * (call-facts.ts). Each result says what was expected and, when it failed, what happened instead.
 */
import type { EndReason } from '../../workflows/call-definitions';
import type { EndedBy, Expectation, Recording, ToolCallSeen } from '../../workflows/test-definitions';
import type { CallFacts } from './call-facts';

export interface ExpectationResult {
  expectation: Expectation;
  description: string;
  passed: boolean;
  /** What happened instead (failed expectations). */
  detail: string | null;
}


export interface AttemptObservation {
  facts: CallFacts;
  endReason: EndReason | null;
  endedBy: EndedBy;
  turnsSent: number;
  recording: Recording | null;
}

const json = (value: unknown) => JSON.stringify(value);
const normal = (text: string) => text.trim().replace(/\s+/g, ' ').toLowerCase();

/** An expected argument matches when equal; text is compared ignoring case and surrounding spaces. */
function sameValue(expected: unknown, actual: unknown): boolean {
  if (typeof expected === 'string' && typeof actual === 'string') return normal(expected) === normal(actual);
  return json(expected) === json(actual);
}

function argsMatch(expected: Record<string, unknown> | undefined, actual: Record<string, unknown>): boolean {
  return Object.entries(expected ?? {}).every(([k, v]) => sameValue(v, actual[k]));
}

const toolsOf = (calls: ToolCallSeen[]) => calls.filter((c) => c.name !== 'end_call');
/** The same tools in the same order with equal arguments (key order aside: JSONB does not keep it). */
export const sameCalls = (a: ToolCallSeen[], b: ToolCallSeen[]) =>
  a.length === b.length && a.every((call, i) => call.name === b[i]!.name && argsMatch(call.args, b[i]!.args) && argsMatch(b[i]!.args, call.args));
const listCalls = (calls: ToolCallSeen[]) => (calls.length ? calls.map((c) => `${c.name}(${json(c.args)})`).join(', ') : 'none');

export function describeExpectation(e: Expectation): string {
  switch (e.type) {
    case 'tool_called':
      return `tool ${e.tool} is called${e.args && Object.keys(e.args).length ? ` with ${json(e.args)}` : ''}`;
    case 'tool_not_called':
      return `tool ${e.tool} is never called`;
    case 'node_reached':
      return `flow node ${e.node_key} is reached`;
    case 'ended_by_agent':
      return 'the agent ends the call';
    case 'end_reason':
      return `the call ends with end_reason ${e.end_reason}`;
    case 'within_turns':
      return `the call ends within ${e.turns} caller turns`;
    case 'said':
      return `the agent says "${e.phrase}"`;
    case 'never_said':
      return `the agent never says "${e.phrase}"`;
    case 'used_document':
      return `the agent answers using document ${e.document}`;
    case 'same_tools':
      return 'the same tools are called with the same arguments as in the recorded call';
    case 'same_nodes':
      return 'the same flow nodes are entered as in the recorded call';
    case 'same_end':
      return 'the call ends the same way as the recorded call';
  }
}

function check(e: Expectation, o: AttemptObservation): string | null {
  const { facts } = o;
  const saidText = facts.agentTexts.map(normal).join('\n');
  switch (e.type) {
    case 'tool_called': {
      const calls = facts.toolCalls.filter((c) => c.name === e.tool);
      if (!calls.length) return `${e.tool} was not called (tools called: ${listCalls(facts.toolCalls)})`;
      return calls.some((c) => argsMatch(e.args, c.args)) ? null : `${e.tool} was called with ${calls.map((c) => json(c.args)).join(', ')}`;
    }
    case 'tool_not_called': {
      const calls = facts.toolCalls.filter((c) => c.name === e.tool);
      return calls.length ? `${e.tool} was called ${calls.length} time(s): ${listCalls(calls)}` : null;
    }
    case 'node_reached':
      return facts.nodes.includes(e.node_key) ? null : `nodes entered: ${facts.nodes.join(' → ') || 'none'}`;
    case 'ended_by_agent':
      return o.endReason === 'agent_ended' ? null : `the call ended with ${o.endReason ?? 'no end reason'} (${o.endedBy === 'limit' ? 'the test ran out of caller lines' : `ended by the ${o.endedBy}`})`;
    case 'end_reason':
      return o.endReason === e.end_reason ? null : `the call ended with ${o.endReason ?? 'no end reason'}`;
    case 'within_turns':
      if (o.endedBy === 'limit') return `the call was still going after ${o.turnsSent} caller turns`;
      return o.turnsSent <= e.turns ? null : `the call ended after ${o.turnsSent} caller turns`;
    case 'said':
      return saidText.includes(normal(e.phrase)) ? null : 'the agent never said it';
    case 'never_said': {
      const line = facts.agentTexts.find((t) => normal(t).includes(normal(e.phrase)));
      return line === undefined ? null : `the agent said: "${line}"`;
    }
    case 'used_document': {
      if (facts.documents.some((d) => normal(d) === normal(e.document))) return null;
      return facts.documents.length
        ? `no reply was given a passage of ${e.document} (documents used: ${facts.documents.join(', ')})`
        : `no reply was given a knowledge-base passage`;
    }
    case 'same_tools': {
      const before = toolsOf((o.recording?.turns ?? []).flatMap((t) => t.tool_calls));
      const now = toolsOf(facts.toolCalls);
      return sameCalls(before, now) ? null : `recorded: ${listCalls(before)}; now: ${listCalls(now)}`;
    }
    case 'same_nodes': {
      const before = (o.recording?.turns ?? []).flatMap((t) => t.nodes);
      return json(before) === json(facts.nodes) ? null : `recorded: ${before.join(' → ') || 'none'}; now: ${facts.nodes.join(' → ') || 'none'}`;
    }
    case 'same_end': {
      const before = o.recording?.end_reason ?? null;
      // The replay hangs up where the recorded caller did: only who ended the call can differ.
      return before === o.endReason || (before === 'user_ended' && o.endedBy === 'limit') ? null : `recorded: ${before ?? 'none'}; now: ${o.endReason ?? 'none'}`;
    }
  }
}

export function evaluateExpectations(expectations: Expectation[], observation: AttemptObservation): ExpectationResult[] {
  return expectations.map((expectation) => {
    const detail = check(expectation, observation);
    return { expectation, description: describeExpectation(expectation), passed: detail === null, detail };
  });
}
