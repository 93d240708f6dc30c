/**
 * Exotel's server half (the descriptor in ./index.ts loads it on first use): Voice v1 REST with
 * `got` (./client.ts), unsigned webhooks (./webhooks.ts, ./status.ts).
 */
import { configValues } from '../../../shared/config-fields';
import { missingFields } from '../settings';
import { TelephonyNotConfigured, type TelephonyVendor } from '../types';
import { EXOTEL_CONFIG } from './settings';
import { createExotelCall, exotelApiBase, hangupExotelCall, type ExotelCredentials } from './client';
import { exotelStreamUrl } from './stream-auth';
import { exotelWebhooks } from './webhooks';

export const exotelVendor: TelephonyVendor<ExotelCredentials> = {
  name: 'exotel',
  label: 'Exotel',
  credentialFields: ['exotel_account_sid', 'exotel_api_key', 'exotel_api_token'],

  credentials(settings, config) {
    const env = configValues(EXOTEL_CONFIG, config);
    const missing = missingFields('exotel', settings, ['account_sid', 'api_key', 'api_token']);
    const apiBaseUrl = env.EXOTEL_API_BASE_URL ?? exotelApiBase(settings.api_base as string | null);
    // A stored base that is not an Exotel host is never sent the token; it reads as unset.
    if (!apiBaseUrl) missing.push('exotel_api_base (an Exotel API host such as api.exotel.com or api.in.exotel.com)');
    if (missing.length) throw new TelephonyNotConfigured('exotel', 'Exotel', missing);
    return {
      accountSid: String(settings.account_sid),
      apiKey: String(settings.api_key),
      apiToken: String(settings.api_token),
      apiBaseUrl: apiBaseUrl!,
      sampleRate: env.EXOTEL_SAMPLE_RATE ?? 8000,
    };
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
