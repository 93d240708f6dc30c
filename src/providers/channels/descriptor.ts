/**
 * A media channel is a way for a call's audio to reach the gateway that is not a telephony vendor:
 * nothing to dial, no webhooks, no stored settings — only a media-stream codec the gateway serves
 * at /media/<name> beside the vendors' (media-registry.ts). `./<name>/index.ts` exports one and
 * registry.ts lists it.
 */
import type { MediaStreamProtocol } from '../telephony/stream';

export interface MediaChannelDescriptor {
  /** The path segment (`/media/<name>`) and the calls' `channel`: lowercase letters. */
  readonly name: string;
  /** For people. */
  readonly label: string;
  readonly media: MediaStreamProtocol;
}
