/**
 * Sarvam speech-to-text (saarika / saaras), registered as `sarvam`: streaming WebSocket with a
 * REST fallback (stream.ts). Wire protocol spoken directly: Sarvam's JavaScript SDK adds nothing
 * the adapter needs (base64 JSON frames over one socket) and has no REST fallback of its own.
 */
import { MULAW_8K, PCM16_16K, PCM16_8K } from '../../../audio/format';
import { configValues, optionalString, urlWithDefault } from '../../../shared/config-fields';
import { firstMissing, required } from '../../vendor';
import type { SttVendor } from '../types';
import { SARVAM_DEFAULTS, SARVAM_LANGUAGES } from './request';
import { SarvamStt } from './stream';

export { SarvamStt } from './stream';
export { SARVAM_DEFAULTS, SARVAM_LANGUAGES, sarvamLanguage, sarvamRequest, sarvamStreamUrl } from './request';

const SARVAM_CONFIG = {
  SARVAM_API_KEY: optionalString,
  SARVAM_BASE_URL: urlWithDefault('https://api.sarvam.ai'),
};

export const descriptor: SttVendor = {
  name: 'sarvam',
  label: 'Sarvam',
  env: ['SARVAM_API_KEY'],
  optionalEnv: ['SARVAM_BASE_URL'],
  config: SARVAM_CONFIG,
  transport: {
    kind: 'wire',
    why: 'JSON frames over one WebSocket, plus a REST fallback per utterance when streaming is refused, which the SDK does not offer',
  },
  capabilities: {
    streaming: true,
    interimResults: false,
    languages: SARVAM_LANGUAGES,
    formats: [PCM16_8K, PCM16_16K],
    modes: ['transcribe', 'translate'],
    settings: 'extra /speech-to-text/ws query parameters (high_vad_sensitivity, …); null removes one of ours',
  },
  missing: (config) => firstMissing(config, ['SARVAM_API_KEY']),
  create(agent, config, options = {}) {
    const format = options.format ?? MULAW_8K;
    return new SarvamStt({
      apiKey: required(config, 'SARVAM_API_KEY'),
      baseUrl: configValues(SARVAM_CONFIG, config).SARVAM_BASE_URL ?? SARVAM_DEFAULTS.baseUrl,
      model: agent.stt_model ?? undefined,
      language: agent.stt_language ?? undefined,
      mode: agent.stt_mode ?? undefined,
      settings: agent.stt_settings ?? {},
      encoding: format.encoding === 'mulaw' ? 'mulaw' : 'linear16',
      sampleRate: format.sampleRate,
      ...options.overrides,
    });
  },
};
