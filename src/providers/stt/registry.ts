/**
 * The STT vendors of this build. Adding one: a folder `src/providers/stt/<vendor>/` whose
 * index.ts exports `descriptor: SttVendor` (with its configuration keys), its entry in
 * STT_VENDORS, a fake in test/fakes and a line in test/support/speech-vendors.ts (the e2e and the
 * latency script pick it up). The agent schema, the catalog and src/config.ts read this list;
 * docs/adding-a-vendor.md.
 */
import type { ProviderConfig } from '../vendor';
import { descriptor as azure } from './azure';
import { descriptor as deepgram } from './deepgram';
import { descriptor as openai } from './openai';
import { descriptor as sarvam } from './sarvam';
import type { AgentSttFields, SttCreateOptions, SttStream, SttVendor } from './types';

export const STT_VENDORS: SttVendor[] = [deepgram, openai, azure, sarvam];

/** The names the API accepts as stt_provider: a live list (registering a vendor adds to it); the first is the default. */
export const STT_PROVIDER_NAMES: string[] = STT_VENDORS.map((v) => v.name);

/** Adds a vendor at run time (tests, an embedding application), before the processes that use it start. */
export function registerSttVendor(vendor: SttVendor): void {
  if (sttVendor(vendor.name)) throw new Error(`STT vendor ${vendor.name} is registered already`);
  STT_VENDORS.push(vendor);
  STT_PROVIDER_NAMES.push(vendor.name);
}

/** The vendors that offer `stt_mode` (capabilities.modes). */
export function sttModeProviders(): string[] {
  return STT_VENDORS.filter((v) => v.capabilities.modes?.length).map((v) => v.name);
}

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
  if (!vendor) return unknownProvider();
  if (agent.stt_mode && !vendor.capabilities.modes?.includes(agent.stt_mode)) return `stt_mode ${agent.stt_mode} is not supported`;
  return vendor.missing(config);
}

/** The agent's STT stream; throws with the sttProblem() message when it cannot run. */
export function createAgentStt(agent: AgentSttFields, config: ProviderConfig, options: SttCreateOptions = {}): SttStream {
  const problem = sttProblem(agent, config);
  if (problem) throw new Error(`STT provider ${agent.stt_provider}: ${problem}`);
  return sttVendor(agent.stt_provider)!.create(agent, config, options);
}

function unknownProvider(): string {
  return `unknown provider (known: ${sttVendorNames().join(', ')})`;
}
