/**
 * Plivo Voice behind the telephony seam: REST with the official `plivo` SDK, X-Plivo-Signature-V3
 * on every callback, Plivo XML answers with a bidirectional `<Stream>`. The media stream half is
 * ./media.ts (registered separately, so the media gateway does not load the SDK).
 */
import { TelephonyNotConfigured, type TelephonyVendor } from '../types';
import { createPlivoCall, hangupPlivoCall, type PlivoCredentials } from './client';
import { e164ToPlivoNumber, plivoWebhooks } from './webhooks';

// Plivo's own bound for ring_timeout.
const MAX_RING_SECS = 120;

export const plivoVendor: TelephonyVendor<PlivoCredentials> = {
  name: 'plivo',
  label: 'Plivo',
  credentialFields: ['plivo_auth_id', 'plivo_auth_token'],

  credentials(settings, config) {
    const { auth_id: authId, auth_token: authToken } = settings.plivo;
    const missing = [...(authId ? [] : ['plivo_auth_id']), ...(authToken ? [] : ['plivo_auth_token'])];
    if (missing.length) throw new TelephonyNotConfigured('plivo', 'Plivo', missing);
    return { authId: authId!, authToken: authToken!, apiBaseUrl: config.PLIVO_API_BASE_URL };
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
    });
    return { providerCallId: ref.sid, response: ref };
  },

  async hangup(creds, id) {
    await hangupPlivoCall(creds, id);
  },

  webhooks: plivoWebhooks(),
};
