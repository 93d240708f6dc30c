/**
 * One chat completion whose answer must be a JSON object of a given schema, in the mode the
 * vendor supports (its descriptor's `structuredOutput`): the JSON-schema response format with
 * `strict: true`, or a forced call of one function whose parameters are the schema. Returns the
 * parsed object unchecked; the caller validates it (neither mode is trusted to be exact).
 */
import type OpenAI from 'openai';
import type { LlmMessage } from '../../../workflows/call-definitions';
import type { LlmVendor } from './types';

export interface StructuredRequest {
  model: string;
  messages: LlmMessage[];
  /** Names the schema (and the function in tool-call mode): letters, digits, _ and -. */
  name: string;
  description: string;
  schema: Record<string, unknown>;
  mode: LlmVendor['structuredOutput'];
}

export interface StructuredResult {
  /** The parsed answer, or undefined with `problem` saying why there is none. */
  value: unknown;
  problem: string | null;
  usage: { prompt_tokens: number; completion_tokens: number };
}

function parsed(text: string | null | undefined): Pick<StructuredResult, 'value' | 'problem'> {
  if (!text?.trim()) return { value: undefined, problem: 'the answer was empty' };
  try {
    return { value: JSON.parse(text) as unknown, problem: null };
  } catch {
    return { value: undefined, problem: 'the answer is not valid JSON' };
  }
}

export async function structuredCompletion(client: OpenAI, req: StructuredRequest, signal?: AbortSignal): Promise<StructuredResult> {
  const base = { model: req.model, messages: req.messages as OpenAI.Chat.ChatCompletionMessageParam[] };
  const completion =
    req.mode === 'json_schema'
      ? await client.chat.completions.create(
          { ...base, response_format: { type: 'json_schema', json_schema: { name: req.name, description: req.description, strict: true, schema: req.schema } } },
          { signal },
        )
      : await client.chat.completions.create(
          {
            ...base,
            tools: [{ type: 'function', function: { name: req.name, description: req.description, parameters: req.schema } }],
            tool_choice: { type: 'function', function: { name: req.name } },
          },
          { signal },
        );
  const usage = { prompt_tokens: completion.usage?.prompt_tokens ?? 0, completion_tokens: completion.usage?.completion_tokens ?? 0 };
  const message = completion.choices[0]?.message;
  if (message?.refusal) return { value: undefined, problem: `the model refused: ${message.refusal}`, usage };
  if (req.mode === 'json_schema') return { ...parsed(message?.content), usage };
  const call = message?.tool_calls?.find((c) => c.type === 'function' && c.function.name === req.name);
  if (!call || call.type !== 'function') return { value: undefined, problem: `the model did not call ${req.name}`, usage };
  return { ...parsed(call.function.arguments), usage };
}
