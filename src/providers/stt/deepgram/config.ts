/** Deepgram's keys, shared by its STT and TTS descriptors. */
import { optionalString, urlWithDefault } from '../../../shared/config-fields';

export const DEEPGRAM_CONFIG = {
  DEEPGRAM_API_KEY: optionalString,
  // Replaces the public host (a self-hosted Deepgram, the fake in tests).
  DEEPGRAM_BASE_URL: urlWithDefault('wss://api.deepgram.com'),
};
