/** The TtsOptions every adapter builds the same way from an agent's fields. */
import type { AgentTtsFields, TtsCreateOptions, TtsOptions } from './types';

export function agentTtsOptions(agent: AgentTtsFields, apiKey: string, baseUrl: string | undefined, options: TtsCreateOptions): TtsOptions {
  return {
    apiKey,
    baseUrl,
    format: options.format,
    role: options.role,
    model: agent.tts_model ?? undefined,
    voice: agent.voice ?? undefined,
    language: agent.tts_language ?? undefined,
    settings: agent.tts_settings ?? {},
    ...options.overrides,
  };
}
