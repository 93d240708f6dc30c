/**
 * A call's MCP tools (docs/tools.md, MCP servers): which one an LLM function name means in the
 * call's current state (the agent's `mcp_tools`, or the current node's), and running it through
 * the `callMcpTool` activity with the same retry policy and events as a webhook tool. Test calls
 * answer from their mocked results (by `server/tool`, or by the function name the LLM used).
 * Workflow code: deterministic, no I/O.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { CallContext } from './call-context';
import type { SnapshotMcpTool, ToolCallOutcome } from './call-definitions';
import { findNode } from './conversation';
import { mockedToolOutcome } from './tool-mocks';
import { mcpArguments } from '../src/shared/mcp-tools';

export class CallMcpTools {
  private readonly mockUses = new Map<string, number>();

  constructor(private readonly ctx: CallContext) {}

  /** The MCP tool the LLM called, if this function name is one offered right now. */
  offered(functionName: string): SnapshotMcpTool | undefined {
    const { agent } = this.ctx.input;
    const tool = (agent.mcp ?? []).find((t) => t.function_name === functionName);
    if (!tool) return undefined;
    const node = findNode(agent, this.ctx.conv.nodeKey);
    const refs = node ? (node.mcp_tools ?? []) : (agent.mcp_tools ?? []);
    return refs.includes(tool.ref) ? tool : undefined;
  }

  /** `merged`: the LLM's arguments with the call's context (toolArguments), as webhook tools get them. */
  async run(tool: SnapshotMcpTool, merged: Record<string, unknown>, toolCallId: string): Promise<ToolCallOutcome> {
    const { input, recorder } = this.ctx;
    const args = mcpArguments(merged, tool.parameters);
    const { callMcpTool } = proxyActivities<Activities>({
      // The tool's own timeout (the session's set-up shares it) plus room to start.
      startToCloseTimeout: `${2 * tool.timeout_secs + 5}s`,
      heartbeatTimeout: '3s',
      retry: { initialInterval: '500ms', maximumAttempts: 3 },
    });
    const mockName = input.test && !input.test.toolResults[tool.ref] && input.test.toolResults[tool.function_name] ? tool.function_name : tool.ref;
    const mocked = input.test ? mockedToolOutcome(input.test, mockName, this.mockUses) : null;
    let outcome: ToolCallOutcome;
    if (mocked) outcome = mocked;
    else {
      try {
        outcome = await callMcpTool({ callId: input.callId, toolCallId, tool, args });
      } catch (err) {
        outcome = { status_code: null, response: null, duration_ms: 0, error: `tool activity failed: ${(err as Error).message}` };
      }
    }
    recorder.record('tool_result', {
      function: tool.function_name,
      server: tool.server,
      tool: tool.tool,
      result: outcome.response,
      status_code: outcome.status_code,
      duration_ms: outcome.duration_ms,
      error: outcome.error,
      ...(mocked ? { mocked: mocked.error === null } : {}),
    });
    return outcome;
  }
}
