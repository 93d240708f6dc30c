/**
 * One streamed chat completion with tool calls, through the openai SDK. Every supported LLM
 * provider speaks this protocol: OpenAI itself, Groq (OpenAI-compatible endpoint) and Azure OpenAI.
 * Streaming lets a caller measure time to first token and, in the gateway, speak the first
 * sentence while the rest is still being generated.
 */
import type OpenAI from 'openai';
import type { LlmMessage, LlmToolSpec } from '../../../workflows/call-definitions';
import type { ProviderConfig } from '../vendor';
import { llmProblem, llmVendor } from './registry';

export interface ChatRequest {
  provider: string;
  model: string;
  messages: LlmMessage[];
  tools: LlmToolSpec[];
  temperature?: number;
  maxTokens?: number;
}

export interface ChatResult {
  content: string;
  toolCalls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>;
  usage: { prompt_tokens: number; completion_tokens: number };
  ttfbMs: number | null;
}

export class LlmNotConfigured extends Error {}

/** Builds the SDK client for an agent's llm_provider from configuration (the registry's descriptor). */
export function llmClientFor(provider: string, config: ProviderConfig): OpenAI {
  const problem = llmProblem({ llm_provider: provider }, config);
  if (problem) throw new LlmNotConfigured(`LLM provider ${provider}: ${problem}`);
  return llmVendor(provider)!.client(config);
}

function parseArguments(raw: string): Record<string, unknown> {
  if (!raw.trim()) return {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { value: parsed };
  } catch {
    // A model occasionally emits broken JSON; pass the text on rather than failing the turn.
    return { _raw: raw };
  }
}

export async function streamChat(
  client: OpenAI,
  request: ChatRequest,
  onText?: (delta: string) => void,
  signal?: AbortSignal,
): Promise<ChatResult> {
  const started = performance.now();
  let ttfbMs: number | null = null;
  const stream = await client.chat.completions.create(
    {
      model: request.model,
      messages: request.messages as OpenAI.Chat.ChatCompletionMessageParam[],
      ...(request.tools.length ? { tools: request.tools } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
      stream: true,
      stream_options: { include_usage: true },
    },
    { signal },
  );
  let content = '';
  const calls = new Map<number, { id: string; name: string; args: string }>();
  let usage = { prompt_tokens: 0, completion_tokens: 0 };
  for await (const chunk of stream) {
    if (chunk.usage) usage = { prompt_tokens: chunk.usage.prompt_tokens, completion_tokens: chunk.usage.completion_tokens };
    const delta = chunk.choices[0]?.delta;
    if (!delta) continue;
    if (ttfbMs === null && (delta.content || delta.tool_calls)) ttfbMs = Math.round(performance.now() - started);
    if (delta.content) {
      content += delta.content;
      onText?.(delta.content);
    }
    for (const tc of delta.tool_calls ?? []) {
      const entry = calls.get(tc.index) ?? { id: '', name: '', args: '' };
      if (tc.id) entry.id = tc.id;
      if (tc.function?.name) entry.name += tc.function.name;
      if (tc.function?.arguments) entry.args += tc.function.arguments;
      calls.set(tc.index, entry);
    }
  }
  const toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, c]) => ({ id: c.id || `call_${index}`, name: c.name, arguments: parseArguments(c.args) }));
  return { content, toolCalls, usage, ttfbMs };
}
