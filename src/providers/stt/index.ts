/**
 * Streaming STT: the interface (types.ts), the vendor registry (registry.ts) and the shared
 * reconnecting wrapper the gateway puts around a call's stream (../resilience.ts).
 */
export * from './types';
export * from './registry';
export { DeepgramStt, deepgramListenUrl, DEEPGRAM_DEFAULTS } from './deepgram';
