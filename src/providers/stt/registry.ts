/**
 * The STT vendors of this build. Adding one: a folder `src/providers/stt/<vendor>/` whose
 * index.ts exports `descriptor: SttVendor`, one line in STT_VENDORS, a fake in test/fakes and a
 * line in test/support/speech-vendors.ts (the e2e and the latency script pick it up).
 */
import { STT_PROVIDERS } from '../../shared/catalog';
import type { ProviderConfig } from '../vendor';
import { descriptor as azure } from './azure';
import { descriptor as deepgram } from './deepgram';
import { descriptor as openai } from './openai';
import { descriptor as sarvam } from './sarvam';
import type { AgentSttFields, SttCreateOptions, SttStream, SttVendor } from './types';

export const STT_VENDORS: readonly SttVendor[] = [deepgram, openai, azure, sarvam];

export function sttVendor(name: string): SttVendor | undefined {
  return STT_VENDORS.find((v) => v.name === name);
}

/** Names of the registered adapters. */
export function sttVendorNames(): string[] {
  return STT_VENDORS.map((v) => v.name);
}

/**
 * Why an agent's STT cannot run with this configuration, or null: no adapter for the name, a
 * missing key, or an stt_mode the vendor does not offer.
 */
export function sttProblem(agent: AgentSttFields, config: ProviderConfig): string | null {
  const vendor = sttVendor(agent.stt_provider);
  if (!vendor) return noAdapter(agent.stt_provider);
  if (agent.stt_mode && !vendor.capabilities.modes?.includes(agent.stt_mode)) return `stt_mode ${agent.stt_mode} is not supported`;
  return vendor.missing(config);
}

/** The agent's STT stream; throws with the sttProblem() message when it cannot run. */
export function createAgentStt(agent: AgentSttFields, config: ProviderConfig, options: SttCreateOptions = {}): SttStream {
  const problem = sttProblem(agent, config);
  if (problem) throw new Error(`STT provider ${agent.stt_provider}: ${problem}`);
  return sttVendor(agent.stt_provider)!.create(agent, config, options);
}

function noAdapter(name: string): string {
  const known = (STT_PROVIDERS as readonly string[]).includes(name);
  return known
    ? `no adapter in this build (available: ${sttVendorNames().join(', ')})`
    : `unknown provider (known: ${STT_PROVIDERS.join(', ')})`;
}
