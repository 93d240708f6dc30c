/**
 * Streaming TTS: the interface (types.ts) and the vendor registry (registry.ts). The gateway
 * creates a call's session at call start, in the stream's audio format.
 */
export * from './types';
export * from './registry';
export { CartesiaTts, CARTESIA_DEFAULTS } from './cartesia';
export { ElevenLabsTts, ELEVENLABS_DEFAULTS } from './elevenlabs';
export { DeepgramTts, DEEPGRAM_TTS_DEFAULTS, deepgramSpeakUrl } from './deepgram';
export { OpenAiTts, OPENAI_TTS_DEFAULTS, openAiSpeechRequest } from './openai';
