/**
 * Streaming TTS by provider name. The gateway calls `createAgentTts(agent, config)` at call
 * start (the connection warms up while the call connects); providers of the catalogue without
 * a streaming adapter fail here with a clear message rather than in the middle of a call.
 */
import type { Config } from '../../config';
import { TTS_PROVIDERS } from '../../shared/catalog';
import { CartesiaTts } from './cartesia';
import { ElevenLabsTts } from './elevenlabs';
import type { TtsOptions, TtsSession } from './types';

export * from './types';
export { CartesiaTts, CARTESIA_DEFAULTS } from './cartesia';
export { ElevenLabsTts, ELEVENLABS_DEFAULTS } from './elevenlabs';

export const STREAMING_TTS_PROVIDERS = ['cartesia', 'elevenlabs'] as const;

export function createTts(provider: string, options: TtsOptions): TtsSession {
  switch (provider) {
    case 'cartesia':
      return new CartesiaTts(options);
    case 'elevenlabs':
      return new ElevenLabsTts(options);
    default:
      throw unsupported(provider);
  }
}

export interface AgentTtsFields {
  tts_provider: string;
  tts_model?: string | null;
  voice?: string | null;
  tts_language?: string | null;
  tts_settings?: Record<string, unknown> | null;
}

export type TtsConfig = Pick<Config, 'CARTESIA_API_KEY' | 'CARTESIA_BASE_URL' | 'ELEVENLABS_API_KEY' | 'ELEVENLABS_BASE_URL'>;

/** Options for an agent's TTS from its fields and the platform configuration (keys, base URLs). */
export function ttsOptionsForAgent(agent: AgentTtsFields, config: TtsConfig, overrides: Partial<TtsOptions> = {}): TtsOptions {
  const vendor = (apiKey: string | undefined, envName: string, baseUrl: string): TtsOptions => {
    if (!apiKey) throw new Error(`TTS provider ${agent.tts_provider} needs ${envName} to be set`);
    return {
      apiKey,
      baseUrl,
      model: agent.tts_model ?? undefined,
      voice: agent.voice ?? undefined,
      language: agent.tts_language ?? undefined,
      settings: agent.tts_settings ?? {},
      ...overrides,
    };
  };
  switch (agent.tts_provider) {
    case 'cartesia':
      return vendor(config.CARTESIA_API_KEY, 'CARTESIA_API_KEY', config.CARTESIA_BASE_URL);
    case 'elevenlabs':
      return vendor(config.ELEVENLABS_API_KEY, 'ELEVENLABS_API_KEY', config.ELEVENLABS_BASE_URL);
    default:
      throw unsupported(agent.tts_provider);
  }
}

export function createAgentTts(agent: AgentTtsFields, config: TtsConfig, overrides: Partial<TtsOptions> = {}): TtsSession {
  return createTts(agent.tts_provider, ttsOptionsForAgent(agent, config, overrides));
}

function unsupported(provider: string): Error {
  const known = (TTS_PROVIDERS as readonly string[]).includes(provider);
  return new Error(
    known
      ? `TTS provider "${provider}" has no streaming adapter yet (available: ${STREAMING_TTS_PROVIDERS.join(', ')})`
      : `Unknown TTS provider "${provider}" (known: ${TTS_PROVIDERS.join(', ')})`,
  );
}
