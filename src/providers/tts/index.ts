/**
 * Streaming TTS, the vendor-neutral part: the interface (types.ts) and the vendor registry
 * (registry.ts). The gateway creates a call's session at call start, in the stream's audio
 * format. A vendor's own classes are imported from its folder (./<vendor>), never from here.
 */
export * from './types';
export * from './registry';
