/**
 * Calls a webhook tool during a call. HTTP failures are not thrown: they go back to the LLM as an
 * error message and the conversation continues. The activity is retried only when the worker itself
 * dies mid-request (noticed through the heartbeat); the Idempotency-Key, the same on every attempt,
 * lets the client recognise the repeat.
 */
import type { ActivityDeps } from '.';
import type { ToolCallOutcome, ToolCallRequest } from '../workflows/call-definitions';
import { callToolWebhook } from '../src/tools/webhook-client';
import { outboundGuard } from '../src/security/outbound-guard';
import { heartbeating } from './heartbeating';

export function createToolActivities({ box, config }: ActivityDeps) {
  const outbound = outboundGuard(config);
  return {
    async callTool({ callId, toolCallId, tool, args }: ToolCallRequest): Promise<ToolCallOutcome> {
      const headers = tool.headers_encrypted ? (JSON.parse(box.decrypt(tool.headers_encrypted)) as Record<string, string>) : {};
      return heartbeating(
        callToolWebhook(
          outbound,
          { webhook_url: tool.webhook_url, webhook_method: tool.webhook_method, headers, timeout_secs: tool.timeout_secs },
          args,
          { idempotencyKey: `${callId}:${toolCallId}` },
        ),
      );
    },
  };
}
