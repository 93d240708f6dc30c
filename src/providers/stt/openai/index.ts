/**
 * OpenAI speech-to-text, registered as `openai`: the caller's VAD segment uploaded to
 * `/v1/audio/transcriptions` (segments.ts). Through the `openai` SDK: a REST upload is what the
 * SDK does well (multipart, error JSON, abort), and its `baseURL` reaches any compatible server.
 */
import { MULAW_8K, PCM16_16K, PCM16_8K } from '../../../audio/format';
import { configValues, optionalUrl } from '../../../shared/config-fields';
import { OPENAI_CONFIG } from '../../llm/openai/config';
import type { SttVendor } from '../types';
import { createOpenAiStt, OPENAI_STT_DEFAULTS } from './segments';

export { createOpenAiStt, openaiLanguage, OPENAI_STT_DEFAULTS } from './segments';

const OPENAI_STT_CONFIG = {
  ...OPENAI_CONFIG,
  // OpenAI speech-to-text; unset = OPENAI_BASE_URL, else https://api.openai.com/v1. Separate because
  // OPENAI_BASE_URL often points at an LLM-only server (Ollama, vLLM) without /audio/transcriptions.
  OPENAI_STT_BASE_URL: optionalUrl(),
};

export const descriptor: SttVendor = {
  name: 'openai',
  label: 'OpenAI',
  env: ['OPENAI_API_KEY'],
  optionalEnv: ['OPENAI_STT_BASE_URL', 'OPENAI_BASE_URL'],
  config: OPENAI_STT_CONFIG,
  transport: {
    kind: 'sdk',
    why: 'one multipart upload per utterance; the openai SDK already handles uploads, error JSON, timeouts and a custom baseURL',
  },
  capabilities: {
    streaming: false,
    interimResults: false,
    languages: 'any',
    formats: [PCM16_8K, PCM16_16K],
    settings: 'prompt and temperature of the transcription request; final_wait_ms (default 4000) bounds the wait for each utterance',
  },
  // A local OpenAI-compatible server (faster-whisper, speaches) may need no key: a base URL will do.
  missing(config) {
    const env = configValues(OPENAI_STT_CONFIG, config);
    return env.OPENAI_API_KEY || env.OPENAI_STT_BASE_URL || env.OPENAI_BASE_URL ? null : 'OPENAI_API_KEY is not set (nor OPENAI_STT_BASE_URL / OPENAI_BASE_URL for an OpenAI-compatible server)';
  },
  create(agent, config, options = {}) {
    const format = options.format ?? MULAW_8K;
    const env = configValues(OPENAI_STT_CONFIG, config);
    return createOpenAiStt({
      apiKey: env.OPENAI_API_KEY ?? 'not-needed-for-local-servers',
      baseUrl: env.OPENAI_STT_BASE_URL ?? env.OPENAI_BASE_URL ?? OPENAI_STT_DEFAULTS.baseUrl,
      model: agent.stt_model ?? undefined,
      language: agent.stt_language ?? undefined,
      settings: agent.stt_settings ?? {},
      encoding: format.encoding === 'mulaw' ? 'mulaw' : 'linear16',
      sampleRate: format.sampleRate,
      ...options.overrides,
    });
  },
};
