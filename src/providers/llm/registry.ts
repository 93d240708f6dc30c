/** The LLM vendors of this build; see types.ts. */
import { LLM_PROVIDERS } from '../../shared/catalog';
import type { ProviderConfig } from '../vendor';
import { descriptor as azure } from './azure';
import { descriptor as groq } from './groq';
import { descriptor as openai } from './openai';
import type { LlmVendor } from './types';

export const LLM_VENDORS: readonly LlmVendor[] = [openai, azure, groq];

export function llmVendor(name: string): LlmVendor | undefined {
  return LLM_VENDORS.find((v) => v.name === name);
}

/** Why an agent's LLM cannot run with this configuration, or null. */
export function llmProblem(agent: { llm_provider: string }, config: ProviderConfig): string | null {
  const vendor = llmVendor(agent.llm_provider);
  if (!vendor) {
    const known = (LLM_PROVIDERS as readonly string[]).includes(agent.llm_provider);
    return known ? `no adapter in this build (available: ${LLM_VENDORS.map((v) => v.name).join(', ')})` : `unknown provider (known: ${LLM_PROVIDERS.join(', ')})`;
  }
  return vendor.missing(config);
}
