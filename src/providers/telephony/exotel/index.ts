/**
 * Exotel (provider_b): Voice v1 REST with `got`, unsigned webhooks, the Voicebot applet's JSON
 * answers (./server.ts, loaded on first use), and the Voicebot bidirectional stream (./media.ts).
 */
import type { TelephonyVendorDescriptor } from '../descriptor';
import { exotelMedia } from './media';
import { EXOTEL_CONFIG, EXOTEL_SETTINGS } from './settings';

export const descriptor: TelephonyVendorDescriptor = {
  name: 'exotel',
  alias: 'provider_b',
  label: 'Exotel',
  settings: EXOTEL_SETTINGS,
  config: EXOTEL_CONFIG,
  capabilities: {
    // developer.exotel.com/docs/agentstream/connect-voice-ai-flow: "Bot → Connect (human)" is an
    // App Bazaar flow (the Voicebot applet ends, a Connect applet dials); a call placed with
    // streamurl (our outbound calls) has no flow to continue, and v1 has no live-call update.
    transfer: { supported: false, how: 'only through an App Bazaar flow: end the stream and let a Connect applet after the Voicebot applet dial' },
    warm_transfer: { supported: false, how: 'the Voicebot stream cannot be redirected, held or conferenced by API; a Connect applet after the Voicebot applet is a cold hand-over' },
    // The Calls/connect parameters have no answering-machine detection.
    machine_detection: { supported: false, how: 'not offered by the Calls/connect API' },
    // developer.exotel.com/docs/agentstream/websocket-protocol: dtmf is receive-only on the Voicebot
    // stream, so the gateway plays the tones into the stream's audio.
    send_dtmf: { supported: true, how: 'in-band DTMF tones (ITU-T Q.23) in the stream audio (the Voicebot stream has no dtmf send)' },
    audio_formats: ['pcm16/8000', 'pcm16/16000'],
  },
  docs:
    "Put a Voicebot applet in the number's App Bazaar flow with the endpoint's inbound_webhook_url as its URL (Exotel asks it for the stream URL), and a Hangup applet after it. Exotel signs nothing: allow only Exotel's addresses at the reverse proxy.",
  answerFormat: 'Voicebot JSON ({"url": …})',
  media: exotelMedia,
  server: async () => (await import('./server')).exotelVendor,
};
