/**
 * The dashboard assistants' access to the LLM: the default LLM vendor (the first of the registry,
 * an OpenAI-compatible server in this build) with LLM_MODEL. Failures become API errors: 503 when
 * it is not configured (naming the keys to set), 502 when it cannot be reached or answers with an
 * error, so clients can tell "set a key" from "the model server is down".
 */
import OpenAI from 'openai';
import type { Config } from '../../config';
import { LLM_VENDORS } from '../../providers/llm/registry';
import { HttpError, unavailable } from '../errors';

export type ChatRequest = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
export type ChatCompletion = OpenAI.Chat.Completions.ChatCompletion;

// A generated agent prompt can be long; a real model needs tens of seconds for it.
const ASSISTANT_TIMEOUT_MS = 90_000;

export interface AssistantLlm {
  model: string;
  complete(request: Omit<ChatRequest, 'model'>): Promise<ChatCompletion>;
}

const defaultVendor = () => LLM_VENDORS[0]!;

export function assistantLlm(config: Config): AssistantLlm | undefined {
  const vendor = defaultVendor();
  if (vendor.missing(config)) return undefined;
  const client = vendor.client(config, { maxRetries: 1, timeoutMs: ASSISTANT_TIMEOUT_MS });
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
  if (!llm) {
    const vendor = defaultVendor();
    throw unavailable(`No LLM is configured: set ${[...vendor.env, ...vendor.optionalEnv].join(' or ')}`);
  }
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
