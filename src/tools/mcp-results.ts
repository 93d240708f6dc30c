/**
 * What an MCP tool result becomes for the LLM, in the webhook tool's outcome shape (the LLM gets
 * `response` as text, or an error message when `error` is set).
 *
 * - Text parts are joined with newlines; a resource with text is its text.
 * - Images, audio and binary resources cannot be shown to a voice agent's LLM: each becomes a short
 *   note (`[image/png image, 2 KB, not shown]`) so the LLM knows something was returned.
 * - A resource link is named by its URI.
 * - With no content at all, `structuredContent` (JSON) is the answer.
 * - `isError: true` is a tool failure: `error` holds the server's text, so the LLM is told the tool
 *   failed with the server's own words, and the call carries on.
 */
import { MAX_RESPONSE_BYTES, type ToolCallResult } from './webhook-client';

type ContentPart = { type: string; [key: string]: unknown };

const kb = (base64: unknown) => `${Math.max(1, Math.round(((typeof base64 === 'string' ? base64.length : 0) * 3) / 4 / 1024))} KB`;

function partText(part: ContentPart): string {
  switch (part.type) {
    case 'text':
      return String(part.text ?? '');
    case 'image':
    case 'audio':
      return `[${String(part.mimeType ?? part.type)} ${part.type}, ${kb(part.data)}, not shown]`;
    case 'resource': {
      const resource = (part.resource ?? {}) as { uri?: string; text?: string; blob?: string; mimeType?: string };
      if (typeof resource.text === 'string') return resource.text;
      return `[resource ${resource.uri ?? ''} (${resource.mimeType ?? 'binary'}, ${kb(resource.blob)}), not shown]`;
    }
    case 'resource_link':
      return `[resource link: ${String(part.uri ?? '')}${part.name ? ` (${String(part.name)})` : ''}]`;
    default:
      return `[${part.type} content, not shown]`;
  }
}

export function mcpResultText(result: Record<string, unknown>): string {
  const parts = Array.isArray(result.content) ? (result.content as ContentPart[]) : [];
  let text = parts.map(partText).filter((t) => t !== '').join('\n');
  // `toolResult`: the protocol's first form (2024-10-07), which the SDK still accepts.
  const structured = result.structuredContent ?? result.toolResult;
  if (text === '' && structured !== undefined) text = JSON.stringify(structured);
  return text.length > MAX_RESPONSE_BYTES ? text.slice(0, MAX_RESPONSE_BYTES) : text;
}

export function mcpOutcome(result: Record<string, unknown>, durationMs: number): ToolCallResult {
  const text = mcpResultText(result);
  // Parsed JSON when the text is JSON, as a webhook's body would be: the events and the LLM see the same.
  let response: unknown = text;
  try {
    if (/^\s*[[{]/.test(text)) response = JSON.parse(text);
  } catch {
    response = text;
  }
  return {
    status_code: null,
    response: result.isError ? null : response,
    duration_ms: durationMs,
    error: result.isError ? `the tool reported an error: ${text || 'no details'}` : null,
  };
}
