/**
 * The LLM vendors of this build; see types.ts. A vendor is its folder and its entry in
 * LLM_VENDORS; the first is the default of new agents. The agent schema, the catalog and the
 * configuration read this list.
 */
import type { ProviderConfig } from '../vendor';
import { descriptor as azure } from './azure';
import { descriptor as groq } from './groq';
import { descriptor as openai } from './openai';
import type { LlmVendor } from './types';

export const LLM_VENDORS: LlmVendor[] = [openai, azure, groq];

/** The names the API accepts as llm_provider: a live list (registering a vendor adds to it). */
export const LLM_PROVIDER_NAMES: string[] = LLM_VENDORS.map((v) => v.name);

/** Each vendor's default model, by name (live, like LLM_PROVIDER_NAMES). */
export const DEFAULT_LLM_MODELS: Record<string, string> = Object.fromEntries(LLM_VENDORS.map((v) => [v.name, v.defaultModel]));

/** Adds a vendor at run time (tests, an embedding application), before the processes that use it start. */
export function registerLlmVendor(vendor: LlmVendor): void {
  if (llmVendor(vendor.name)) throw new Error(`LLM vendor ${vendor.name} is registered already`);
  LLM_VENDORS.push(vendor);
  LLM_PROVIDER_NAMES.push(vendor.name);
  DEFAULT_LLM_MODELS[vendor.name] = vendor.defaultModel;
}

export function llmVendor(name: string): LlmVendor | undefined {
  return LLM_VENDORS.find((v) => v.name === name);
}

/** Why an agent's LLM cannot run with this configuration, or null. */
export function llmProblem(agent: { llm_provider: string }, config: ProviderConfig): string | null {
  const vendor = llmVendor(agent.llm_provider);
  if (!vendor) return `unknown provider (known: ${LLM_PROVIDER_NAMES.join(', ')})`;
  return vendor.missing(config);
}
