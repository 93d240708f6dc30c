/**
 * Cartesia streaming TTS, registered as `cartesia`. Wire protocol spoken directly (stream.ts):
 * one socket per call multiplexing utterances as contexts; the SDK's socket wrapper buffers
 * whole responses and cannot be told our reconnect policy.
 */
import { MULAW_8K, PCM16_16K, PCM16_8K } from '../../../audio/format';
import { configValues, optionalString, urlWithDefault } from '../../../shared/config-fields';
import { firstMissing, required } from '../../vendor';
import { agentTtsOptions } from '../agent-options';
import type { TtsVendor } from '../types';
import { CARTESIA_DEFAULTS, CartesiaTts } from './stream';

export { CartesiaTts, CARTESIA_DEFAULTS, cartesiaOutputFormat, cartesiaRequestBase } from './stream';

const CARTESIA_CONFIG = {
  CARTESIA_API_KEY: optionalString,
  CARTESIA_BASE_URL: urlWithDefault('wss://api.cartesia.ai'),
};

export const descriptor: TtsVendor = {
  name: 'cartesia',
  label: 'Cartesia',
  env: ['CARTESIA_API_KEY'],
  optionalEnv: ['CARTESIA_BASE_URL'],
  config: CARTESIA_CONFIG,
  transport: {
    kind: 'wire',
    why: 'one WebSocket per call with a context per utterance; cancel and reconnect are ours, raw audio in the stream format',
  },
  capabilities: {
    streaming: true,
    languages: 'any',
    formats: [MULAW_8K, PCM16_8K, PCM16_16K],
    voice: `Cartesia voice id (default ${CARTESIA_DEFAULTS.voice})`,
    settings: 'request fields (speed, volume, emotion → generation_config; cartesia_version header; null removes a default)',
  },
  missing: (config) => firstMissing(config, ['CARTESIA_API_KEY']),
  create: (agent, config, options = {}) =>
    new CartesiaTts(agentTtsOptions(agent, required(config, 'CARTESIA_API_KEY'), configValues(CARTESIA_CONFIG, config).CARTESIA_BASE_URL ?? CARTESIA_DEFAULTS.baseUrl, options)),
};
