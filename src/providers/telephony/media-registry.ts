/**
 * The media-stream protocols the media gateway serves, at /media/<provider>: each registered
 * vendor's codec (its descriptor's `media`). Reads only the light descriptors, so the gateway
 * loads no vendor REST SDK.
 */
import { telephonyDescriptor, telephonyDescriptors } from './registry';
import type { MediaStreamProtocol } from './stream';

export function mediaProtocol(provider: string): MediaStreamProtocol | undefined {
  return telephonyDescriptor(provider)?.media;
}

/** The largest message any protocol accepts: the WebSocket server's payload limit. */
export function maxMediaMessageBytes(): number {
  return Math.max(...telephonyDescriptors().map((v) => v.media.maxMessageBytes));
}
