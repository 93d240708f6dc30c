/**
 * The dashboard assistants' access to the configured LLM (OpenAI or any OpenAI-compatible server).
 * Failures become API errors: 503 when no LLM is configured, 502 when it cannot be reached or
 * answers with an error, so clients can tell "set OPENAI_*" from "the model server is down".
 */
import OpenAI from 'openai';
import type { Config } from '../../config';
import { createOpenAIClient } from '../../providers/llm/openai-client';
import { HttpError, unavailable } from '../errors';

export type ChatRequest = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
export type ChatCompletion = OpenAI.Chat.Completions.ChatCompletion;

// A generated agent prompt can be long; a real model needs tens of seconds for it.
const ASSISTANT_TIMEOUT_MS = 90_000;

export interface AssistantLlm {
  model: string;
  complete(request: Omit<ChatRequest, 'model'>): Promise<ChatCompletion>;
}

export function assistantLlm(config: Config): AssistantLlm | undefined {
  const client = createOpenAIClient(config, { maxRetries: 1, timeoutMs: ASSISTANT_TIMEOUT_MS });
  if (!client) return undefined;
  return {
    model: config.LLM_MODEL,
    async complete(request) {
      try {
        return await client.chat.completions.create({ ...request, model: config.LLM_MODEL });
      } catch (err) {
        throw llmFailure(err);
      }
    },
  };
}

export function requireLlm(llm: AssistantLlm | undefined): AssistantLlm {
  if (!llm) throw unavailable('No LLM is configured: set OPENAI_API_KEY or OPENAI_BASE_URL');
  return llm;
}

export const badLlmOutput = (problem: string) => new HttpError(502, `The LLM returned an unusable answer: ${problem}`);

function llmFailure(err: unknown): HttpError {
  if (err instanceof OpenAI.APIConnectionTimeoutError) return new HttpError(502, 'The LLM did not answer in time');
  if (err instanceof OpenAI.APIConnectionError) return new HttpError(502, `The LLM server is unreachable: ${err.message}`);
  if (err instanceof OpenAI.APIError) return new HttpError(502, `The LLM request failed: ${err.message}`);
  return new HttpError(502, `The LLM request failed: ${err instanceof Error ? err.message : String(err)}`);
}

/** The single answer of a completion; a refused answer is not usable. */
export function firstChoice(completion: ChatCompletion) {
  const choice = completion.choices?.[0];
  if (!choice?.message) throw badLlmOutput('no choices in the response');
  if (choice.message.refusal) throw badLlmOutput(`the model refused: ${choice.message.refusal}`);
  return choice;
}
