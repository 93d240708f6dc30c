/**
 * The TTS vendors of this build. Adding one: a folder `src/providers/tts/<vendor>/` whose
 * index.ts exports `descriptor: TtsVendor`, one line in TTS_VENDORS, a fake in test/fakes and a
 * line in test/support/speech-vendors.ts (the e2e and the latency script pick it up).
 */
import { TTS_PROVIDERS } from '../../shared/catalog';
import type { ProviderConfig } from '../vendor';
import { descriptor as azure } from './azure';
import { descriptor as cartesia } from './cartesia';
import { descriptor as deepgram } from './deepgram';
import { descriptor as elevenlabs } from './elevenlabs';
import { descriptor as openai } from './openai';
import type { AgentTtsFields, TtsCreateOptions, TtsSession, TtsVendor } from './types';

export const TTS_VENDORS: readonly TtsVendor[] = [cartesia, elevenlabs, deepgram, openai, azure];

export function ttsVendor(name: string): TtsVendor | undefined {
  return TTS_VENDORS.find((v) => v.name === name);
}

export function ttsVendorNames(): string[] {
  return TTS_VENDORS.map((v) => v.name);
}

/** Why an agent's TTS cannot run with this configuration, or null. */
export function ttsProblem(agent: AgentTtsFields, config: ProviderConfig): string | null {
  const vendor = ttsVendor(agent.tts_provider);
  if (!vendor) return noAdapter(agent.tts_provider);
  return vendor.missing(config);
}

/** The agent's TTS session; throws with the ttsProblem() message when it cannot run. */
export function createAgentTts(agent: AgentTtsFields, config: ProviderConfig, options: TtsCreateOptions = {}): TtsSession {
  const problem = ttsProblem(agent, config);
  if (problem) throw new Error(`TTS provider ${agent.tts_provider}: ${problem}`);
  return ttsVendor(agent.tts_provider)!.create(agent, config, options);
}

function noAdapter(name: string): string {
  const known = (TTS_PROVIDERS as readonly string[]).includes(name);
  return known
    ? `no adapter in this build (available: ${ttsVendorNames().join(', ')})`
    : `unknown provider (known: ${TTS_PROVIDERS.join(', ')})`;
}
