/**
 * Deepgram Aura streaming TTS, registered as `deepgram`. Wire protocol spoken directly
 * (stream.ts): four JSON messages and binary audio; the SDK's live client adds its own
 * connection handling and event layer on the audio path and nothing we need.
 */
import { MULAW_8K, PCM16_16K, PCM16_8K } from '../../../audio/format';
import { configValues } from '../../../shared/config-fields';
import { DEEPGRAM_CONFIG } from '../../stt/deepgram/config';
import { firstMissing, required } from '../../vendor';
import { agentTtsOptions } from '../agent-options';
import type { TtsVendor } from '../types';
import { DEEPGRAM_TTS_DEFAULTS, DeepgramTts } from './stream';

export { DeepgramTts, DEEPGRAM_TTS_DEFAULTS, deepgramSpeakUrl } from './stream';

export const descriptor: TtsVendor = {
  name: 'deepgram',
  label: 'Deepgram Aura',
  env: ['DEEPGRAM_API_KEY'],
  optionalEnv: ['DEEPGRAM_BASE_URL'],
  config: DEEPGRAM_CONFIG,
  transport: {
    kind: 'wire',
    why: 'Speak/Flush/Clear over one WebSocket per call, raw audio in the stream format; the SDK adds nothing on the hot path',
  },
  capabilities: {
    streaming: true,
    // Aura voices are per language: the model name carries it (aura-2-thalia-en, aura-2-celeste-es, …).
    languages: 'any',
    formats: [MULAW_8K, PCM16_8K, PCM16_16K],
    voice: `the Aura model, which names voice and language (default ${DEEPGRAM_TTS_DEFAULTS.model}); tts_model is used when voice is unset`,
    settings: 'extra /v1/speak query parameters (e.g. mip_opt_out); encoding and sample_rate are always the stream\'s',
  },
  missing: (config) => firstMissing(config, ['DEEPGRAM_API_KEY']),
  create: (agent, config, options = {}) =>
    new DeepgramTts(agentTtsOptions(agent, required(config, 'DEEPGRAM_API_KEY'), configValues(DEEPGRAM_CONFIG, config).DEEPGRAM_BASE_URL ?? DEEPGRAM_TTS_DEFAULTS.baseUrl, options)),
};
