/**
 * Streaming STT, the vendor-neutral part: the interface (types.ts) and the vendor registry
 * (registry.ts). A vendor's own classes are imported from its folder (./<vendor>), never from
 * here, so this module names no vendor.
 */
export * from './types';
export * from './registry';
