/**
 * Twilio Programmable Voice: REST with the official `twilio` SDK, X-Twilio-Signature on every
 * webhook, TwiML answers (./server.ts, loaded on first use), and Media Streams (./media.ts).
 */
import type { TelephonyVendorDescriptor } from '../descriptor';
import { twilioMedia } from './media';
import { TWILIO_CONFIG, TWILIO_SETTINGS } from './settings';

export const descriptor: TelephonyVendorDescriptor = {
  name: 'twilio',
  alias: 'provider_a',
  label: 'Twilio',
  settings: TWILIO_SETTINGS,
  config: TWILIO_CONFIG,
  capabilities: {
    // twilio.com/docs/voice/api/call-resource#update-a-call-resource: new TwiML (<Dial>) on the live call.
    transfer: { supported: true, how: 'update the live call with TwiML <Dial> (Call resource update)' },
    warm_transfer: { supported: true, how: 'the caller waits in a <Conference> (call update, waitUrl hold audio); the human is a call of its own with a <Connect><Stream> briefing, then updated into the conference' },
    // twilio.com/docs/voice/answering-machine-detection: MachineDetection / AsyncAmd on call create.
    machine_detection: { supported: true, how: 'MachineDetection (or AsyncAmd) when the call is created; AnsweredBy in the callback' },
    // <Play digits> needs a call update with new TwiML, which replaces the running <Connect><Stream>
    // and ends the media stream: the gateway plays the tones into the stream instead.
    send_dtmf: { supported: true, how: 'in-band DTMF tones (ITU-T Q.23) in the stream audio; <Play digits> would end the <Connect><Stream>' },
    audio_formats: ['mulaw/8000'],
  },
  docs:
    "Point the number's voice webhook (A call comes in, HTTP POST) at the endpoint's inbound_webhook_url. The auth token checks X-Twilio-Signature on every webhook, so public_base_url must be the URL Twilio calls.",
  answerFormat: 'TwiML',
  // The first answer URL the platform gave outbound calls.
  legacyAnswerPaths: ['/telephony/twilio/twiml/{call_id}'],
  media: twilioMedia,
  server: async () => (await import('./server')).twilioVendor,
};
