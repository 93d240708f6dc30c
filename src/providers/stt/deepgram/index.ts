/**
 * Deepgram streaming STT, registered as `deepgram`. Wire protocol spoken directly (stream.ts):
 * the SDK adds nothing on the hot path and wraps the socket in its own reconnect logic, which
 * would fight the shared one (src/providers/resilience.ts).
 */
import { MULAW_8K, PCM16_16K, PCM16_8K } from '../../../audio/format';
import { configValues } from '../../../shared/config-fields';
import { firstMissing, required } from '../../vendor';
import type { SttVendor } from '../types';
import { DEEPGRAM_CONFIG } from './config';
import { DEEPGRAM_DEFAULTS, DeepgramStt } from './stream';

export { DeepgramStt, deepgramListenUrl, DEEPGRAM_DEFAULTS } from './stream';

export const descriptor: SttVendor = {
  name: 'deepgram',
  label: 'Deepgram',
  env: ['DEEPGRAM_API_KEY'],
  optionalEnv: ['DEEPGRAM_BASE_URL'],
  config: DEEPGRAM_CONFIG,
  transport: {
    kind: 'wire',
    why: 'one WebSocket with JSON control frames; the SDK would add its own reconnects and buffering on the audio path',
  },
  capabilities: {
    streaming: true,
    interimResults: true,
    languages: 'any',
    formats: [MULAW_8K, PCM16_8K, PCM16_16K],
    settings: 'extra /v1/listen query parameters (keyterm, smart_format, endpointing, …); null removes one of ours',
  },
  missing: (config) => firstMissing(config, ['DEEPGRAM_API_KEY']),
  create(agent, config, options = {}) {
    const format = options.format ?? MULAW_8K;
    return new DeepgramStt({
      apiKey: required(config, 'DEEPGRAM_API_KEY'),
      baseUrl: configValues(DEEPGRAM_CONFIG, config).DEEPGRAM_BASE_URL ?? DEEPGRAM_DEFAULTS.baseUrl,
      model: agent.stt_model ?? undefined,
      language: agent.stt_language ?? undefined,
      settings: agent.stt_settings ?? {},
      encoding: format.encoding === 'mulaw' ? 'mulaw' : 'linear16',
      sampleRate: format.sampleRate,
      ...options.overrides,
    });
  },
};
