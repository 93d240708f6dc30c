/**
 * The media channels of this build (descriptor.ts): each is its folder and its line below.
 * The media gateway serves them beside the telephony vendors (telephony/media-registry.ts).
 */
import type { MediaChannelDescriptor } from './descriptor';
import { descriptor as web } from './web';

const CHANNELS: readonly MediaChannelDescriptor[] = [web];

export function mediaChannels(): readonly MediaChannelDescriptor[] {
  return CHANNELS;
}
