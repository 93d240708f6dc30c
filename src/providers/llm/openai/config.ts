/** OpenAI's keys, shared by its LLM, STT and TTS descriptors. */
import { optionalString, optionalUrl } from '../../../shared/config-fields';

export const OPENAI_CONFIG = {
  OPENAI_API_KEY: optionalString,
  // An OpenAI-compatible server instead of api.openai.com (Ollama, vLLM, a test fake).
  OPENAI_BASE_URL: optionalUrl(),
};
