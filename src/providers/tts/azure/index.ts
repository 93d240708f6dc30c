/**
 * Azure text-to-speech, registered as `azure`, through the Speech SDK (stream.ts): the SDK
 * because Azure's synthesis WebSocket (framed headers, turn/stream ids, token refresh) is only
 * documented through it; it streams each sentence's audio as `synthesizing` events.
 */
import { MULAW_8K, PCM16_16K, PCM16_8K } from '../../../audio/format';
import { AZURE_SPEECH_CONFIG, azureConnection, azureMissing } from '../../azure-speech/speech-config';
import type { TtsVendor } from '../types';
import { AZURE_TTS_DEFAULTS, AzureTts } from './stream';

export { AzureTts, AZURE_TTS_DEFAULTS, azureOutputFormat } from './stream';
export { azureSsml } from './ssml';

export const descriptor: TtsVendor = {
  name: 'azure',
  label: 'Azure Speech',
  env: ['AZURE_SPEECH_KEY'],
  optionalEnv: ['AZURE_SPEECH_REGION', 'AZURE_SPEECH_HOST', 'AZURE_SPEECH_ENDPOINT'],
  config: AZURE_SPEECH_CONFIG,
  transport: {
    kind: 'sdk',
    why: "Azure's synthesis WebSocket is documented only through the Speech SDK; it streams each sentence's audio as it is made",
  },
  capabilities: {
    streaming: true,
    languages: 'any',
    formats: [MULAW_8K, PCM16_8K, PCM16_16K],
    voice: `an Azure neural voice name (e.g. hi-IN-SwaraNeural, en-IN-NeerjaNeural); default ${AZURE_TTS_DEFAULTS.voice}`,
    settings: 'SSML: style, style_degree, role (mstts:express-as); rate, pitch, volume (prosody)',
  },
  missing: azureMissing,
  create: (agent, config, options = {}) =>
    new AzureTts({
      connection: azureConnection(config),
      format: options.format ?? MULAW_8K,
      voice: agent.voice ?? undefined,
      language: agent.tts_language ?? undefined,
      settings: agent.tts_settings ?? {},
      role: options.role,
      ...(options.overrides?.handshakeTimeoutMs ? { firstAudioTimeoutMs: options.overrides.handshakeTimeoutMs } : {}),
    }),
};
