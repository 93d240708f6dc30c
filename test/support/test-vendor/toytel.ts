/**
 * Toytel's descriptor: what a telephony vendor's `index.ts` exports (src/providers/telephony/
 * descriptor.ts). Registered by the tests that use it, with one call:
 * `registerTelephonyVendor(toytel)`.
 */
import { optionalUrl } from '../../../src/shared/config-fields';
import type { TelephonyVendorDescriptor } from '../../../src/providers/telephony/descriptor';
import { setting } from '../../../src/providers/telephony/settings';
import { toytelMedia } from './toytel-media';

export const TOYTEL_CONFIG = {
  // Where Toytel's REST API is: the fake's address in tests (no default: there is no real host).
  TOYTEL_API_BASE_URL: optionalUrl(),
};

export const toytel: TelephonyVendorDescriptor = {
  name: 'toytel',
  alias: null,
  label: 'Toytel',
  settings: {
    account_id: setting.text('Account ID', 'The account id of the Toytel console'),
    api_secret: setting.secret('API secret', 'Signs every webhook (x-toytel-signature) and authenticates REST calls'),
    phone_number: setting.phone('Phone number', 'A Toytel number (E.164): the caller ID of outbound calls'),
    max_concurrent: setting.maxConcurrent(),
  },
  config: TOYTEL_CONFIG,
  capabilities: {
    transfer: { supported: false, how: 'Toytel has no transfer' },
    warm_transfer: { supported: false, how: 'Toytel has no transfer' },
    machine_detection: { supported: false, how: 'Toytel has no answering-machine detection' },
    send_dtmf: { supported: false, how: 'the stream takes audio, marks and clears only' },
    audio_formats: ['pcm16/8000'],
  },
  docs: "Set the number's webhook to the endpoint's inbound_webhook_url; the API secret signs every webhook.",
  answerFormat: 'Toytel JSON',
  media: toytelMedia,
  server: async () => (await import('./toytel-server')).toytelVendor,
};
