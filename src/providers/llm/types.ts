/**
 * One LLM vendor: `src/providers/llm/<vendor>/index.ts` exports `descriptor: LlmVendor`, listed in
 * `src/providers/llm/registry.ts`. Every supported vendor speaks the OpenAI chat-completions
 * protocol, so a descriptor only says how to build the SDK client and which model is the default.
 */
import type OpenAI from 'openai';
import type { ProviderConfig, VendorDescriptor } from '../vendor';

export interface LlmClientOptions {
  maxRetries?: number;
  timeoutMs?: number;
}

export interface LlmVendor extends VendorDescriptor {
  /** The model used when an agent sets no llm_model: one the vendor serves today (checked against its SDK or docs). */
  readonly defaultModel: string;
  /**
   * How the vendor is asked for an answer in a given JSON shape (post-call analysis):
   * `json_schema` = `response_format: {type: "json_schema", strict: true}`; `tool_call` = a forced
   * call of one function whose parameters are the schema, for vendors whose usual models lack it.
   */
  readonly structuredOutput: 'json_schema' | 'tool_call';
  /** The SDK client; throws when `missing(config)` is not null. No retries unless asked (the workflow retries). */
  client(config: ProviderConfig, options?: LlmClientOptions): OpenAI;
}
