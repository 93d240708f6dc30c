/**
 * Calls a webhook tool or an MCP tool during a call. Failures are not thrown: they go back to the
 * LLM as an error message and the conversation continues. The activity is retried only when the
 * worker itself dies mid-request (noticed through the heartbeat); a webhook's Idempotency-Key, the
 * same on every attempt, lets the client recognise the repeat.
 */
import type { ActivityDeps } from '.';
import type { McpToolCallRequest, ToolCallOutcome, ToolCallRequest } from '../workflows/call-definitions';
import { callToolWebhook } from '../src/tools/webhook-client';
import { McpSessionPool } from '../src/tools/mcp-sessions';
import { outboundGuard } from '../src/security/outbound-guard';
import { heartbeating } from './heartbeating';
import { annotateActiveSpan } from '../src/observability/tracing/spans';

export function createToolActivities({ box, config }: ActivityDeps) {
  const outbound = outboundGuard(config);
  // One MCP session per server configuration, shared by this worker's calls (src/tools/mcp-sessions.ts).
  const mcpSessions = new McpSessionPool(outbound);
  const unseal = (sealed: string | null) => (sealed ? (JSON.parse(box.decrypt(sealed)) as Record<string, string>) : {});
  return {
    async callTool({ callId, toolCallId, tool, args }: ToolCallRequest): Promise<ToolCallOutcome> {
      annotateActiveSpan(() => ({ 'call.id': callId, 'tool.name': tool.name, 'tool.kind': 'webhook' }));
      return heartbeating(
        callToolWebhook(
          outbound,
          { webhook_url: tool.webhook_url, webhook_method: tool.webhook_method, headers: unseal(tool.headers_encrypted), timeout_secs: tool.timeout_secs },
          args,
          { idempotencyKey: `${callId}:${toolCallId}` },
        ),
      );
    },
    async callMcpTool({ callId, toolCallId, tool, args }: McpToolCallRequest): Promise<ToolCallOutcome> {
      annotateActiveSpan(() => ({ 'call.id': callId, 'tool.name': tool.tool, 'tool.kind': 'mcp' }));
      return heartbeating(
        mcpSessions.callTool({ url: tool.url, headers: unseal(tool.headers_encrypted), timeout_secs: tool.timeout_secs }, tool.tool, args, {
          idempotencyKey: `${callId}:${toolCallId}`,
        }),
      );
    },
  };
}
