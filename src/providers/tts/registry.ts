/**
 * The TTS vendors of this build. Adding one: a folder `src/providers/tts/<vendor>/` whose
 * index.ts exports `descriptor: TtsVendor` (with its configuration keys), its entry in
 * TTS_VENDORS, a fake in test/fakes and a line in test/support/speech-vendors.ts (the e2e and the
 * latency script pick it up). The agent schema, the catalog and src/config.ts read this list;
 * docs/adding-a-vendor.md.
 */
import type { ProviderConfig } from '../vendor';
import { descriptor as azure } from './azure';
import { descriptor as cartesia } from './cartesia';
import { descriptor as deepgram } from './deepgram';
import { descriptor as elevenlabs } from './elevenlabs';
import { descriptor as openai } from './openai';
import type { AgentTtsFields, TtsCreateOptions, TtsSession, TtsVendor } from './types';

export const TTS_VENDORS: TtsVendor[] = [cartesia, elevenlabs, deepgram, openai, azure];

/** The names the API accepts as tts_provider: a live list (registering a vendor adds to it); the first is the default. */
export const TTS_PROVIDER_NAMES: string[] = TTS_VENDORS.map((v) => v.name);

/** Adds a vendor at run time (tests, an embedding application), before the processes that use it start. */
export function registerTtsVendor(vendor: TtsVendor): void {
  if (ttsVendor(vendor.name)) throw new Error(`TTS vendor ${vendor.name} is registered already`);
  TTS_VENDORS.push(vendor);
  TTS_PROVIDER_NAMES.push(vendor.name);
}

export function ttsVendor(name: string): TtsVendor | undefined {
  return TTS_VENDORS.find((v) => v.name === name);
}

export function ttsVendorNames(): string[] {
  return TTS_VENDORS.map((v) => v.name);
}

/** Why an agent's TTS cannot run with this configuration, or null. */
export function ttsProblem(agent: AgentTtsFields, config: ProviderConfig): string | null {
  const vendor = ttsVendor(agent.tts_provider);
  if (!vendor) return unknownProvider();
  return vendor.missing(config);
}

/** The agent's TTS session; throws with the ttsProblem() message when it cannot run. */
export function createAgentTts(agent: AgentTtsFields, config: ProviderConfig, options: TtsCreateOptions = {}): TtsSession {
  const problem = ttsProblem(agent, config);
  if (problem) throw new Error(`TTS provider ${agent.tts_provider}: ${problem}`);
  return ttsVendor(agent.tts_provider)!.create(agent, config, options);
}

function unknownProvider(): string {
  return `unknown provider (known: ${ttsVendorNames().join(', ')})`;
}
