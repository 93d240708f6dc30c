/**
 * Tool results of a test call (docs/agent-tests.md): the n-th call of a tool gets its n-th mocked
 * result (the last one once they run out); a tool without results gets an error the run reports.
 * Workflow code: pure.
 */
import type { TestCallOptions, ToolCallOutcome } from './call-definitions';

export const unmockedToolError = (name: string) => `tool ${name} is not mocked in this test`;

export function mockedToolOutcome(test: TestCallOptions, toolName: string, uses: Map<string, number>): ToolCallOutcome {
  const results = test.toolResults[toolName];
  if (!results?.length) return { status_code: null, response: null, duration_ms: 0, error: unmockedToolError(toolName) };
  const n = uses.get(toolName) ?? 0;
  uses.set(toolName, n + 1);
  return { status_code: 200, response: results[Math.min(n, results.length - 1)], duration_ms: 0, error: null };
}
