/**
 * Twilio Programmable Voice behind the telephony seam: REST with the official `twilio` SDK,
 * X-Twilio-Signature on every webhook, TwiML answers. The media stream half is ./media.ts
 * (registered separately, so the media gateway does not load the SDK).
 */
import { TelephonyNotConfigured, type TelephonyVendor } from '../types';
import { createTwilioCall, hangupTwilioCall, type TwilioCredentials } from './client';
import { twilioWebhooks } from './webhooks';

// Twilio's own bound for Timeout.
const MAX_RING_SECS = 600;

export const twilioVendor: TelephonyVendor<TwilioCredentials> = {
  name: 'twilio',
  label: 'Twilio',
  credentialFields: ['twilio_account_sid', 'twilio_auth_token'],

  credentials(settings, config) {
    const { account_sid: accountSid, auth_token: authToken } = settings.twilio;
    const missing = [...(accountSid ? [] : ['twilio_account_sid']), ...(authToken ? [] : ['twilio_auth_token'])];
    if (missing.length) throw new TelephonyNotConfigured('twilio', 'Twilio', missing);
    return { accountSid: accountSid!, authToken: authToken!, apiBaseUrl: config.TWILIO_API_BASE_URL };
  },

  async dial(creds, req) {
    const ref = await createTwilioCall(creds, {
      to: req.to,
      from: req.from,
      twimlUrl: req.answerUrl,
      statusCallbackUrl: req.statusUrl,
      timeoutSecs: Math.min(req.ringTimeoutSecs, MAX_RING_SECS),
      timeLimitSecs: req.timeLimitSecs,
    });
    return { providerCallId: ref.sid, response: ref };
  },

  async hangup(creds, callSid) {
    await hangupTwilioCall(creds, callSid);
  },

  webhooks: twilioWebhooks,
};
