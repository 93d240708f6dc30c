/**
 * OpenAI TTS, registered as `openai`. Official SDK (stream.ts): `audio.speech.create` streams the
 * response body as it is generated, takes OPENAI_BASE_URL (our fake, or any OpenAI-compatible
 * speech server), and hands us raw PCM that we resample once — nothing to gain from raw HTTP.
 */
import { configValues } from '../../../shared/config-fields';
import { OPENAI_CONFIG } from '../../llm/openai/config';
import { agentTtsOptions } from '../agent-options';
import type { TtsVendor } from '../types';
import { OPENAI_TTS_DEFAULTS, OpenAiTts } from './stream';

export { OpenAiTts, OPENAI_TTS_DEFAULTS, openAiSpeechRequest } from './stream';

const MISSING = 'OPENAI_API_KEY is not set (nor OPENAI_BASE_URL for an OpenAI-compatible server)';

export const descriptor: TtsVendor = {
  name: 'openai',
  label: 'OpenAI',
  env: ['OPENAI_API_KEY'],
  optionalEnv: ['OPENAI_BASE_URL'],
  config: OPENAI_CONFIG,
  transport: {
    kind: 'sdk',
    why: 'the openai SDK streams the audio body as it arrives and takes a base URL; raw 24 kHz PCM is resampled once to the stream format',
  },
  capabilities: {
    streaming: true,
    languages: 'any',
    // OpenAI only produces 24 kHz PCM: every stream format is one resample away.
    formats: [],
    voice: `an OpenAI voice (alloy, ash, ballad, coral, echo, fable, onyx, nova, sage, shimmer, verse, …; default ${OPENAI_TTS_DEFAULTS.voice})`,
    settings: 'extra audio/speech fields: speed (0.25–4), instructions (gpt-4o-mini-tts); input and response_format are ours',
  },
  missing(config) {
    const env = configValues(OPENAI_CONFIG, config);
    return env.OPENAI_API_KEY || env.OPENAI_BASE_URL ? null : MISSING;
  },
  create(agent, config, options = {}) {
    const env = configValues(OPENAI_CONFIG, config);
    return new OpenAiTts(agentTtsOptions(agent, env.OPENAI_API_KEY ?? 'not-needed-for-local-servers', env.OPENAI_BASE_URL, options));
  },
};
