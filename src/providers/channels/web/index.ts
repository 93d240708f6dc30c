/**
 * The web channel: a browser talks to an agent through its microphone (the dashboard's Talk
 * button, the embeddable widget; docs/web-calls.md). Only the media half of a telephony vendor
 * applies — no REST client, webhooks or settings — so it is a media channel, not a vendor.
 */
import type { MediaChannelDescriptor } from '../descriptor';
import { webMedia } from './media';

export const descriptor: MediaChannelDescriptor = {
  name: 'web',
  label: 'Browser',
  media: webMedia,
};
