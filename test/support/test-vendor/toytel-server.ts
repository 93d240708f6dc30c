/** Toytel's server half: REST with fetch, signed JSON webhooks, JSON answers (./toytel-wire.ts). */
import { configValues } from '../../../src/shared/config-fields';
import { publicRequestUrl } from '../../../src/providers/telephony/public-url';
import { missingFields } from '../../../src/providers/telephony/settings';
import { TelephonyNotConfigured, TelephonyProviderError, type HttpAnswer, type ProviderCallStatus, type TelephonyVendor } from '../../../src/providers/telephony/types';
import { countField, field, phoneField, requireCallId, webhookParams } from '../../../src/providers/telephony/webhook-fields';
import { TOYTEL_CONFIG } from './toytel';
import { signatureMatches, SIGNATURE_HEADER, TOYTEL_STATUSES } from './toytel-wire';

interface ToytelCredentials {
  accountId: string;
  apiSecret: string;
  apiBaseUrl: string;
}

const NEUTRAL: Record<(typeof TOYTEL_STATUSES)[number], ProviderCallStatus> = {
  ringing: 'ringing',
  answered: 'answered',
  completed: 'completed',
  busy: 'busy',
  failed: 'failed',
  no_answer: 'no_answer',
};

const json = (body: unknown): HttpAnswer => ({ status: 200, contentType: 'application/json', body: JSON.stringify(body) });

async function rest(creds: ToytelCredentials, method: string, path: string, body?: unknown): Promise<Response> {
  const auth = Buffer.from(`${creds.accountId}:${creds.apiSecret}`).toString('base64');
  try {
    return await fetch(`${creds.apiBaseUrl}/v1/accounts/${encodeURIComponent(creds.accountId)}${path}`, {
      method,
      headers: { authorization: `Basic ${auth}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(10_000),
    });
  } catch (err) {
    throw new TelephonyProviderError('toytel', 'unavailable', `Toytel could not be reached: ${(err as Error).message}`);
  }
}

async function refusal(res: Response): Promise<TelephonyProviderError> {
  const detail = ((await res.json().catch(() => ({}))) as { error?: string }).error ?? `HTTP ${res.status}`;
  const kind = res.status === 401 ? 'auth' : res.status === 404 ? 'not_found' : res.status >= 500 ? 'unavailable' : 'rejected';
  return new TelephonyProviderError('toytel', kind, `Toytel: ${detail}`, null, res.status);
}

export const toytelVendor: TelephonyVendor<ToytelCredentials> = {
  name: 'toytel',
  label: 'Toytel',
  credentialFields: ['toytel_account_id', 'toytel_api_secret'],

  credentials(settings, config) {
    const missing = missingFields('toytel', settings, ['account_id', 'api_secret']);
    const apiBaseUrl = configValues(TOYTEL_CONFIG, config).TOYTEL_API_BASE_URL;
    if (!apiBaseUrl) missing.push('TOYTEL_API_BASE_URL (configuration)');
    if (missing.length) throw new TelephonyNotConfigured('toytel', 'Toytel', missing);
    return { accountId: String(settings.account_id), apiSecret: String(settings.api_secret), apiBaseUrl: apiBaseUrl! };
  },

  async dial(creds, req) {
    const res = await rest(creds, 'POST', '/calls', { to: req.to, from: req.from, answer_url: req.answerUrl, status_url: req.statusUrl, ring_timeout_secs: req.ringTimeoutSecs });
    if (res.status !== 201) throw await refusal(res);
    const call = (await res.json()) as { id: string; status: string };
    return { providerCallId: call.id, response: { sid: call.id, status: call.status } };
  },

  async hangup(creds, providerCallId) {
    const res = await rest(creds, 'DELETE', `/calls/${encodeURIComponent(providerCallId)}`);
    if (res.status !== 204 && res.status !== 404) throw await refusal(res);
  },

  webhooks: {
    verify(req, { settings, publicBaseUrl }) {
      const secret = settings.api_secret;
      if (typeof secret !== 'string') return { ok: false, detail: 'Toytel is not configured: no toytel_api_secret to check the signature with' };
      const url = publicRequestUrl(publicBaseUrl, req.originalUrl);
      return signatureMatches(secret, url, JSON.stringify(req.body), req.headers[SIGNATURE_HEADER]) ? { ok: true } : { ok: false, detail: 'Invalid x-toytel-signature' };
    },
    inboundCall(req) {
      const params = webhookParams(req);
      return {
        providerCallId: requireCallId(params, 'call_id'),
        from: phoneField(params, 'from', { required: false }) ?? 'anonymous',
        to: phoneField(params, 'to', { required: true })!,
      };
    },
    statusUpdate(req) {
      const params = webhookParams(req);
      const status = field(params, 'status');
      if (!status) return null;
      const neutral = (TOYTEL_STATUSES as readonly string[]).includes(status) ? NEUTRAL[status as keyof typeof NEUTRAL] : null;
      return { providerCallId: field(params, 'call_id') ?? null, providerStatus: status, status: neutral, durationSecs: countField(params, 'duration_secs') };
    },
    providerCallId: (req) => field(webhookParams(req), 'call_id') ?? null,
    connect: ({ streamUrl, callId, token }) => json({ action: 'stream', url: streamUrl, params: { call_id: callId, token } }),
    reject: () => json({ action: 'reject' }),
    busy: () => json({ action: 'reject', reason: 'busy' }),
    sayAndHangup: (text) => json({ action: 'say', text }),
  },
};
