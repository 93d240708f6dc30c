/**
 * Plivo's server half (the descriptor in ./index.ts loads it on first use, so the media gateway
 * never loads the SDK): REST with the official `plivo` SDK, callbacks, Plivo XML answers.
 */
import { configValues } from '../../../shared/config-fields';
import { missingFields } from '../settings';
import { TelephonyNotConfigured, type TelephonyVendor } from '../types';
import { PLIVO_CONFIG } from './settings';
import { createPlivoCall, hangupPlivoCall, type PlivoCredentials } from './client';
import { e164ToPlivoNumber, plivoWebhooks } from './webhooks';
import { plivoTransfer } from './transfer';

// Plivo's own bound for ring_timeout.
const MAX_RING_SECS = 120;

export const plivoVendor: TelephonyVendor<PlivoCredentials> = {
  name: 'plivo',
  label: 'Plivo',
  credentialFields: ['plivo_auth_id', 'plivo_auth_token'],

  credentials(settings, config) {
    const missing = missingFields('plivo', settings, ['auth_id', 'auth_token']);
    if (missing.length) throw new TelephonyNotConfigured('plivo', 'Plivo', missing);
    return { authId: String(settings.auth_id), authToken: String(settings.auth_token), apiBaseUrl: configValues(PLIVO_CONFIG, config).PLIVO_API_BASE_URL };
  },

  async dial(creds, req) {
    // Plivo reports ringing on the ring URL and the final status on the hangup URL: both go to
    // the call's status URL. Its answer is only the API request's id; the CallUUID comes with
    // the first callback and replaces it (see the seam's StatusUpdate.providerCallId).
    const ref = await createPlivoCall(creds, {
      to: e164ToPlivoNumber(req.to),
      from: e164ToPlivoNumber(req.from),
      answerUrl: req.answerUrl,
      hangupUrl: req.statusUrl,
      ringUrl: req.statusUrl,
      ringTimeoutSecs: Math.min(req.ringTimeoutSecs, MAX_RING_SECS),
      timeLimitSecs: req.timeLimitSecs,
      ...(req.machineDetection ? { machineDetectionUrl: req.machineDetection.url } : {}),
    });
    return { providerCallId: ref.sid, response: ref };
  },

  async hangup(creds, id) {
    await hangupPlivoCall(creds, id);
  },

  webhooks: plivoWebhooks(),
  transfer: plivoTransfer,
};
