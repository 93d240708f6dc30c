/**
 * The media-stream protocols the media gateway serves, at /media/<name>: each registered
 * telephony vendor's codec (its descriptor's `media`) and each media channel's
 * (src/providers/channels/). Reads only the light descriptors, so the gateway loads no vendor
 * REST SDK.
 */
import { mediaChannels } from '../channels/registry';
import { telephonyDescriptors } from './registry';
import type { MediaStreamProtocol } from './stream';

const protocols = (): MediaStreamProtocol[] => [...telephonyDescriptors().map((v) => v.media), ...mediaChannels().map((c) => c.media)];

export function mediaProtocol(name: string): MediaStreamProtocol | undefined {
  return protocols().find((p) => p.name === name);
}

/** The largest message any protocol accepts: the WebSocket server's payload limit. */
export function maxMediaMessageBytes(): number {
  return Math.max(...protocols().map((p) => p.maxMessageBytes));
}
