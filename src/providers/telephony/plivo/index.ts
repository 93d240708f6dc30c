/**
 * Plivo Voice: REST with the official `plivo` SDK, X-Plivo-Signature-V3 on every callback, Plivo
 * XML answers with a bidirectional `<Stream>` (./server.ts, loaded on first use), and the Audio
 * Stream protocol (./media.ts).
 */
import type { TelephonyVendorDescriptor } from '../descriptor';
import { plivoMedia } from './media';
import { PLIVO_CONFIG, PLIVO_SETTINGS } from './settings';

export const descriptor: TelephonyVendorDescriptor = {
  name: 'plivo',
  alias: 'provider_c',
  label: 'Plivo',
  settings: PLIVO_SETTINGS,
  config: PLIVO_CONFIG,
  capabilities: {
    // plivo.com/docs/voice/api/call#transfer-a-call: POST /Call/{uuid}/ with legs and aleg_url.
    transfer: { supported: true, how: 'Transfer a call API (POST …/Call/{call_uuid}/ with legs=aleg and aleg_url)' },
    // plivo.com/docs/voice/xml/conference (waitSound, startConferenceOnEnter, endConferenceOnExit).
    warm_transfer: {
      supported: true,
      how: 'the Transfer a call API moves the caller into a <Conference startConferenceOnEnter="false" waitSound> (hold audio), a Make a call API call (machine_detection) briefs the destination, the Transfer API moves it into the conference',
    },
    // plivo.com/docs/voice/api/call#make-a-call: machine_detection=true|hangup, machine_detection_url.
    machine_detection: { supported: true, how: 'machine_detection when the call is made; the result comes to machine_detection_url' },
    // plivo.com/docs/voice/api/call#send-digits (POST …/Call/{call_uuid}/DTMF/) exists, but the
    // tones in the stream's own audio need no REST round trip and behave as on every vendor.
    send_dtmf: { supported: true, how: 'in-band DTMF tones (ITU-T Q.23) in the stream audio (the Send digits API is not used)' },
    audio_formats: ['mulaw/8000', 'pcm16/8000', 'pcm16/16000'],
  },
  docs:
    "Create a Plivo application whose answer URL (POST) is the endpoint's inbound_webhook_url and attach the number to it. The auth token checks X-Plivo-Signature-V3 on every callback, so public_base_url must be the URL Plivo calls.",
  answerFormat: 'Plivo XML',
  media: plivoMedia,
  server: async () => (await import('./server')).plivoVendor,
};
