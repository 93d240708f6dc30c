/**
 * Azure speech-to-text, registered as `azure`, through the Speech SDK (stream.ts). The SDK, not
 * the wire: Azure's WebSocket protocol (framed headers, turn bookkeeping, token refresh, its own
 * reconnection) is only documented through the SDK, which Microsoft keeps in step with the service.
 */
import { MULAW_8K, PCM16_16K, PCM16_8K } from '../../../audio/format';
import { AZURE_SPEECH_CONFIG, azureConnection, azureMissing } from '../../azure-speech/speech-config';
import type { SttVendor } from '../types';
import { AzureStt } from './stream';

export { AzureStt, AZURE_STT_DEFAULTS } from './stream';

export const descriptor: SttVendor = {
  name: 'azure',
  label: 'Azure Speech',
  env: ['AZURE_SPEECH_KEY'],
  optionalEnv: ['AZURE_SPEECH_REGION', 'AZURE_SPEECH_HOST', 'AZURE_SPEECH_ENDPOINT'],
  config: AZURE_SPEECH_CONFIG,
  transport: {
    kind: 'sdk',
    why: "Azure's WebSocket protocol is documented only through the Speech SDK, which handles its framing, turns and reconnects",
  },
  capabilities: {
    streaming: true,
    interimResults: true,
    languages: 'any',
    formats: [PCM16_8K, PCM16_16K],
    settings: 'segmentation_silence_ms (default 400), profanity (masked|removed|raw), endpoint_id (Custom Speech)',
  },
  missing: azureMissing,
  create(agent, config, options = {}) {
    const format = options.format ?? MULAW_8K;
    return new AzureStt({
      connection: azureConnection(config),
      language: agent.stt_language ?? undefined,
      sampleRate: format.sampleRate,
      encoding: format.encoding === 'mulaw' ? 'mulaw' : 'linear16',
      settings: agent.stt_settings ?? {},
      ...(options.overrides?.closeTimeoutMs ? { closeTimeoutMs: options.overrides.closeTimeoutMs } : {}),
    });
  },
};
