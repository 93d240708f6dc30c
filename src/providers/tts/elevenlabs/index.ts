/**
 * ElevenLabs streaming TTS, registered as `elevenlabs`. Wire protocol spoken directly
 * (stream.ts): the `stream-input` socket is one utterance per connection and the latency comes
 * from keeping a spare connection open between turns, which the SDK has no notion of.
 */
import { MULAW_8K, PCM16_16K, PCM16_8K } from '../../../audio/format';
import { configValues, optionalString, urlWithDefault } from '../../../shared/config-fields';
import { firstMissing, required } from '../../vendor';
import { agentTtsOptions } from '../agent-options';
import type { TtsVendor } from '../types';
import { ELEVENLABS_DEFAULTS, ElevenLabsTts } from './stream';

export { ElevenLabsTts, ELEVENLABS_DEFAULTS, elevenLabsOutputFormat, elevenLabsRequest } from './stream';

const ELEVENLABS_CONFIG = {
  ELEVENLABS_API_KEY: optionalString,
  ELEVENLABS_BASE_URL: urlWithDefault('wss://api.elevenlabs.io'),
};

export const descriptor: TtsVendor = {
  name: 'elevenlabs',
  label: 'ElevenLabs',
  env: ['ELEVENLABS_API_KEY'],
  optionalEnv: ['ELEVENLABS_BASE_URL'],
  config: ELEVENLABS_CONFIG,
  transport: {
    kind: 'wire',
    why: 'stream-input is one utterance per socket; we keep a warm spare socket between turns, which the SDK cannot',
  },
  capabilities: {
    streaming: true,
    languages: 'any',
    formats: [MULAW_8K, PCM16_8K, PCM16_16K],
    voice: `ElevenLabs voice_id (default ${ELEVENLABS_DEFAULTS.voice})`,
    settings: 'stability, similarity_boost, style, use_speaker_boost, speed → voice_settings; other keys → query parameters',
  },
  missing: (config) => firstMissing(config, ['ELEVENLABS_API_KEY']),
  create: (agent, config, options = {}) =>
    new ElevenLabsTts(agentTtsOptions(agent, required(config, 'ELEVENLABS_API_KEY'), configValues(ELEVENLABS_CONFIG, config).ELEVENLABS_BASE_URL ?? ELEVENLABS_DEFAULTS.baseUrl, options)),
};
