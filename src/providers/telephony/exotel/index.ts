/**
 * Exotel (provider_b) behind the telephony seam: Voice v1 REST with `got` (./client.ts), unsigned
 * webhooks (./webhooks.ts, ./status.ts) and the Voicebot bidirectional stream (./media.ts,
 * registered separately so the media gateway loads no REST code).
 */
import { TelephonyNotConfigured, type TelephonyVendor } from '../types';
import { createExotelCall, exotelApiBase, hangupExotelCall, type ExotelCredentials } from './client';
import { exotelStreamUrl } from './stream-auth';
import { exotelWebhooks } from './webhooks';

export const exotelVendor: TelephonyVendor<ExotelCredentials> = {
  name: 'exotel',
  label: 'Exotel',
  credentialFields: ['exotel_account_sid', 'exotel_api_key', 'exotel_api_token'],

  credentials(settings, config) {
    const { account_sid: accountSid, api_key: apiKey, api_token: apiToken, api_base: apiBase } = settings.exotel;
    const missing = [...(accountSid ? [] : ['exotel_account_sid']), ...(apiKey ? [] : ['exotel_api_key']), ...(apiToken ? [] : ['exotel_api_token'])];
    const apiBaseUrl = config.EXOTEL_API_BASE_URL ?? exotelApiBase(apiBase);
    // A stored base that is not an Exotel host is never sent the token; it reads as unset.
    if (!apiBaseUrl) missing.push('exotel_api_base (an Exotel API host such as api.exotel.com or api.in.exotel.com)');
    if (missing.length) throw new TelephonyNotConfigured('exotel', 'Exotel', missing);
    return { accountSid: accountSid!, apiKey: apiKey!, apiToken: apiToken!, apiBaseUrl: apiBaseUrl!, sampleRate: config.EXOTEL_SAMPLE_RATE };
  },

  async dial(creds, req) {
    // The answered call goes straight to our stream (AgentStream's streamurl): Exotel fetches
    // no answer URL for it. The stream URL carries the call id and token, like the inbound one.
    const ref = await createExotelCall(creds, {
      to: req.to,
      callerId: req.from,
      streamUrl: exotelStreamUrl(req.stream.streamUrl, req.stream.callId, req.stream.token, creds.sampleRate),
      statusCallbackUrl: req.statusUrl,
      customField: req.callId,
      timeLimitSecs: req.timeLimitSecs,
    });
    return { providerCallId: ref.sid, response: ref };
  },

  async hangup(creds, id) {
    await hangupExotelCall(creds, id);
  },

  webhooks: exotelWebhooks(),
};
