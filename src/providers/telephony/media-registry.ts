/**
 * The media-stream protocols the media gateway serves, at /media/<provider>. Kept apart from
 * registry.ts so the gateway loads no vendor REST SDK. One line per vendor.
 */
import type { TelephonyProvider } from '../../shared/catalog';
import type { MediaStreamProtocol } from './stream';
import { exotelMedia } from './exotel/media';
import { plivoMedia } from './plivo/media';
import { twilioMedia } from './twilio/media';

const PROTOCOLS: Partial<Record<TelephonyProvider, MediaStreamProtocol>> = {
  twilio: twilioMedia,
  exotel: exotelMedia,
  plivo: plivoMedia,
};

export function mediaProtocol(provider: string): MediaStreamProtocol | undefined {
  return Object.hasOwn(PROTOCOLS, provider) ? PROTOCOLS[provider as TelephonyProvider] : undefined;
}

/** The largest message any protocol accepts: the WebSocket server's payload limit. */
export function maxMediaMessageBytes(): number {
  return Math.max(...Object.values(PROTOCOLS).map((p) => p.maxMessageBytes));
}
