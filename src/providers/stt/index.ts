/**
 * Streaming STT by provider name. The gateway calls `createAgentStt(agent, config)` at call
 * start; providers of the catalogue without a streaming adapter fail here with a clear message
 * rather than in the middle of a call.
 */
import type { Config } from '../../config';
import { STT_PROVIDERS } from '../../shared/catalog';
import { DeepgramStt } from './deepgram';
import { createOpenAiStt } from './openai';
import { SarvamStt } from './sarvam';
import type { SttOptions, SttStream } from './types';

export * from './types';
export { DeepgramStt, deepgramListenUrl, DEEPGRAM_DEFAULTS } from './deepgram';

export const STREAMING_STT_PROVIDERS = ['deepgram', 'openai', 'sarvam'] as const;

export function createStt(provider: string, options: SttOptions): SttStream {
  switch (provider) {
    case 'deepgram':
      return new DeepgramStt(options);
    case 'openai':
      return createOpenAiStt(options);
    case 'sarvam':
      return new SarvamStt(options);
    default:
      throw unsupported(provider);
  }
}

export interface AgentSttFields {
  stt_provider: string;
  stt_model?: string | null;
  stt_language?: string | null;
  stt_mode?: string | null;
  stt_settings?: Record<string, unknown> | null;
}

export type SttConfig = Pick<Config, 'DEEPGRAM_API_KEY' | 'DEEPGRAM_BASE_URL'> &
  Partial<Pick<Config, 'OPENAI_API_KEY' | 'OPENAI_BASE_URL' | 'OPENAI_STT_BASE_URL' | 'SARVAM_API_KEY' | 'SARVAM_BASE_URL'>>;

/** Options for an agent's STT from its fields and the platform configuration (keys, base URLs). */
export function sttOptionsForAgent(agent: AgentSttFields, config: SttConfig, overrides: Partial<SttOptions> = {}): SttOptions {
  switch (agent.stt_provider) {
    case 'deepgram':
      if (!config.DEEPGRAM_API_KEY) throw new Error('STT provider deepgram needs DEEPGRAM_API_KEY to be set');
      return {
        apiKey: config.DEEPGRAM_API_KEY,
        baseUrl: config.DEEPGRAM_BASE_URL,
        model: agent.stt_model ?? undefined,
        language: agent.stt_language ?? undefined,
        settings: agent.stt_settings ?? {},
        ...overrides,
      };
    case 'openai':
      if (!config.OPENAI_API_KEY) throw new Error('STT provider openai needs OPENAI_API_KEY to be set');
      return {
        apiKey: config.OPENAI_API_KEY,
        baseUrl: config.OPENAI_STT_BASE_URL ?? config.OPENAI_BASE_URL,
        model: agent.stt_model ?? undefined,
        language: agent.stt_language ?? undefined,
        settings: agent.stt_settings ?? {},
        ...overrides,
      };
    case 'sarvam':
      if (!config.SARVAM_API_KEY) throw new Error('STT provider sarvam needs SARVAM_API_KEY to be set');
      return {
        apiKey: config.SARVAM_API_KEY,
        baseUrl: config.SARVAM_BASE_URL,
        model: agent.stt_model ?? undefined,
        language: agent.stt_language ?? undefined,
        mode: agent.stt_mode ?? undefined,
        settings: agent.stt_settings ?? {},
        ...overrides,
      };
    default:
      throw unsupported(agent.stt_provider);
  }
}

export function createAgentStt(agent: AgentSttFields, config: SttConfig, overrides: Partial<SttOptions> = {}): SttStream {
  return createStt(agent.stt_provider, sttOptionsForAgent(agent, config, overrides));
}

function unsupported(provider: string): Error {
  const known = (STT_PROVIDERS as readonly string[]).includes(provider);
  return new Error(
    known
      ? `STT provider "${provider}" has no streaming adapter yet (available: ${STREAMING_STT_PROVIDERS.join(', ')})`
      : `Unknown STT provider "${provider}" (known: ${STT_PROVIDERS.join(', ')})`,
  );
}
