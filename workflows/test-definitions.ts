/**
 * Agent tests (docs/agent-tests.md): the shapes a test run exchanges between the API, the run and
 * attempt workflows and their activities. Types and pure helpers only (workflow-safe).
 */
import type { AgentSnapshot, CallWorkflowInput, EndReason } from './call-definitions';

export type TestKind = 'simulated' | 'scripted' | 'replay';

/** What a test checks on each attempt; `same_*` compare with the recorded call (replay tests). */
export type Expectation =
  | { type: 'tool_called'; tool: string; args?: Record<string, unknown> }
  | { type: 'tool_not_called'; tool: string }
  | { type: 'node_reached'; node_key: string }
  | { type: 'ended_by_agent' }
  | { type: 'end_reason'; end_reason: EndReason }
  | { type: 'within_turns'; turns: number }
  | { type: 'said'; phrase: string }
  | { type: 'never_said'; phrase: string }
  | { type: 'used_document'; document: string }
  | { type: 'same_tools' }
  | { type: 'same_nodes' }
  | { type: 'same_end' };

export interface ToolCallSeen {
  name: string;
  args: Record<string, unknown>;
}

/** One caller turn and what the agent said and did in answer (turn 0: before the caller spoke). */
export interface TurnRecord {
  caller: string | null;
  replies: string[];
  tool_calls: ToolCallSeen[];
  nodes: string[];
}

/** A real call as a replay test keeps it: enough to replay the caller and compare the agent. */
export interface Recording {
  call_id: string;
  agent_version: number | null;
  direction: 'inbound' | 'outbound';
  turns: TurnRecord[];
  end_reason: EndReason | null;
  /** Results of the call's webhook tools, by tool name in call order: the replay's tool mocks. */
  tool_results: Record<string, unknown[]>;
}

export interface TestCaseSpec {
  id: string;
  name: string;
  kind: TestKind;
  persona: string | null;
  script: string[];
  custom_parameters: Record<string, string | number>;
  max_turns: number;
  expectations: Expectation[];
  judge: string[];
  tool_mocks: Record<string, unknown[]>;
  pass_threshold: number;
  recording: Recording | null;
}

/** The LLM playing the caller and judging (default: the agent's own provider and model). */
export interface SimulatorLlm {
  provider: string;
  model: string;
}

export interface TestRunInput {
  runId: string;
  /** The version under test first, then the one it is compared with (compare_version). */
  agents: AgentSnapshot[];
  tests: TestCaseSpec[];
  repeat: number;
  concurrency: number;
  options: CallWorkflowInput['options'];
  simulator: SimulatorLlm | null;
}

export interface TestAttemptInput {
  runId: string;
  test: TestCaseSpec;
  agent: AgentSnapshot;
  attempt: number;
  options: CallWorkflowInput['options'];
  simulator: SimulatorLlm | null;
}

export interface AttemptKey {
  runId: string;
  testId: string;
  version: number;
  attempt: number;
}

/** How the conversation stopped: the agent ended it, the caller hung up, or the test ran out of lines. */
export type EndedBy = 'agent' | 'caller' | 'limit';

export interface LlmUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface AttemptOutcome {
  passed: boolean;
  error: string | null;
}

/** Deterministic child ids: a run restarted by a new worker neither loses nor repeats an attempt. */
export function attemptWorkflowId(runId: string, testId: string, attempt: number, compareVersion?: number): string {
  return `test-${runId}-${testId}-${attempt}${compareVersion === undefined ? '' : `-v${compareVersion}`}`;
}

export const testRunWorkflowId = (runId: string) => `test-run-${runId}`;

/** The tool results a test call gets instead of calling webhooks: the recording's, then the test's own. */
export function toolResultsFor(test: TestCaseSpec): Record<string, unknown[]> {
  return { ...(test.recording?.tool_results ?? {}), ...test.tool_mocks };
}

/** How many caller turns an attempt may take. */
export function turnLimit(test: TestCaseSpec): number {
  if (test.kind === 'scripted') return Math.min(test.script.length, test.max_turns);
  if (test.kind === 'replay') return (test.recording?.turns ?? []).filter((t) => t.caller !== null).length;
  return test.max_turns;
}
