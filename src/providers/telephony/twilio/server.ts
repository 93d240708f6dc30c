/**
 * Twilio's server half (the descriptor in ./index.ts loads it on first use, so the media gateway
 * never loads the SDK): REST with the official `twilio` SDK, webhooks, TwiML answers.
 */
import { configValues } from '../../../shared/config-fields';
import { missingFields } from '../settings';
import { TelephonyNotConfigured, type TelephonyVendor } from '../types';
import { TWILIO_CONFIG } from './settings';
import { createTwilioCall, hangupTwilioCall, type TwilioCredentials } from './client';
import { twilioWebhooks } from './webhooks';
import { twilioTransfer } from './transfer';

// Twilio's own bound for Timeout.
const MAX_RING_SECS = 600;

export const twilioVendor: TelephonyVendor<TwilioCredentials> = {
  name: 'twilio',
  label: 'Twilio',
  credentialFields: ['twilio_account_sid', 'twilio_auth_token'],

  credentials(settings, config) {
    const missing = missingFields('twilio', settings, ['account_sid', 'auth_token']);
    if (missing.length) throw new TelephonyNotConfigured('twilio', 'Twilio', missing);
    return { accountSid: String(settings.account_sid), authToken: String(settings.auth_token), apiBaseUrl: configValues(TWILIO_CONFIG, config).TWILIO_API_BASE_URL };
  },

  async dial(creds, req) {
    const ref = await createTwilioCall(creds, {
      to: req.to,
      from: req.from,
      twimlUrl: req.answerUrl,
      statusCallbackUrl: req.statusUrl,
      timeoutSecs: Math.min(req.ringTimeoutSecs, MAX_RING_SECS),
      timeLimitSecs: req.timeLimitSecs,
      // Leaving a message needs the greeting's end (machine_end_*); hanging up only needs "machine".
      ...(req.machineDetection
        ? { machineDetection: { mode: req.machineDetection.action === 'leave_message' ? 'DetectMessageEnd' : 'Enable', callbackUrl: req.machineDetection.url } }
        : {}),
    });
    return { providerCallId: ref.sid, response: ref };
  },

  async hangup(creds, callSid) {
    await hangupTwilioCall(creds, callSid);
  },

  webhooks: twilioWebhooks,
  transfer: twilioTransfer,
};
