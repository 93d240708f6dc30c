/**
 * Plivo's webhooks in neutral terms: X-Plivo-Signature-V3 checks, the answer-URL request of an
 * incoming call, ring/hangup callbacks, and the Plivo XML answers.
 *
 * Plivo sends phone numbers as digits without the `+` (`14155550100`); they are turned into
 * E.164 here, the form the telephony endpoints are stored in.
 */
import type { HttpAnswer, InboundCall, StreamConnection, VendorWebhooks, WebhookRequest, WebhookVerdict } from '../types';
import { field, phoneField, requireCallId, webhookParams } from '../webhook-fields';
import { DEFAULT_PLIVO_CONTENT_TYPE, type PlivoContentType } from './media-messages';
import { publicRequestUrl } from '../public-url';
import { PLIVO_NONCE_HEADER, PLIVO_SIGNATURE_HEADER, validatePlivoHttpRequest } from './signature';
import { parsePlivoMachineDetection } from './amd';
import { parsePlivoCallback } from './status';
import { plivoStreamExtraHeaders } from './stream-auth';
import { rejectXml, speakAndHangupXml, streamXml } from './xml';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Callers without a phone number: a withheld number, a Plivo SIP endpoint.
const NON_PHONE_CALLER = /^(anonymous|restricted|unknown|private|sip:[^\s<>"]{1,60})$/i;

const xml = (body: string): HttpAnswer => ({ status: 200, contentType: 'text/xml', body });

/** `14155550100` → `+14155550100`; anything else unchanged (validated by phoneField). */
export function plivoNumberToE164(value: string | undefined): string | undefined {
  return value !== undefined && /^[1-9]\d{6,14}$/.test(value) ? `+${value}` : value;
}

/** E.164 → the digits Plivo's API documents (`+14155550100` → `14155550100`). */
export function e164ToPlivoNumber(value: string): string {
  return value.replace(/^\+/, '');
}

/**
 * The webhooks with the `<Stream contentType>` to ask for. The registry's vendor uses the default:
 * the seam's `connect(stream)` receives neither the config nor the agent, so a setting such as
 * PLIVO_CONTENT_TYPE (or a per-agent choice) cannot reach it yet. Everything downstream already
 * follows the stream: the codec reads the format from `start.mediaFormat`, the gateway runs VAD,
 * STT, TTS and the recording in it. Making it configurable needs `connect(stream, { config })`
 * (or the choice inside StreamConnection) in the seam, then one line here.
 */
export function plivoWebhooks(contentType: PlivoContentType = DEFAULT_PLIVO_CONTENT_TYPE): VendorWebhooks {
  return {
    verify(req, { settings, publicBaseUrl }): WebhookVerdict {
      const authToken = settings.auth_token as string | null;
      if (!authToken) return { ok: false, detail: 'Plivo is not configured: no plivo_auth_token to check X-Plivo-Signature-V3 with' };
      if (!req.headers[PLIVO_SIGNATURE_HEADER]) return { ok: false, detail: 'Missing X-Plivo-Signature-V3' };
      if (!req.headers[PLIVO_NONCE_HEADER]) return { ok: false, detail: 'Missing X-Plivo-Signature-V3-Nonce' };
      if (!validatePlivoHttpRequest(req, { authToken, publicBaseUrl })) {
        // Usually public_base_url differs from the URL given to Plivo (scheme, host, port or prefix).
        return { ok: false, detail: 'Invalid X-Plivo-Signature-V3', log: { checked_url: publicRequestUrl(publicBaseUrl, req.originalUrl) } };
      }
      return { ok: true };
    },

    inboundCall(req: WebhookRequest): InboundCall {
      const params = webhookParams(req);
      const providerCallId = requireCallId(params, 'CallUUID');
      const body = { From: plivoNumberToE164(field(params, 'From')), To: plivoNumberToE164(field(params, 'To')) };
      const from = phoneField(body, 'From', { required: false, alsoAllowed: NON_PHONE_CALLER }) ?? 'anonymous';
      const to = phoneField(body, 'To', { required: true, alsoAllowed: /^sip:[^\s<>"]{1,60}$/i })!;
      return { providerCallId, from, to };
    },

    statusUpdate: (req) => parsePlivoCallback(webhookParams(req)),

    machineDetection: (req) => parsePlivoMachineDetection(webhookParams(req)),

    providerCallId(req) {
      const uuid = field(webhookParams(req), 'CallUUID');
      return uuid && UUID.test(uuid) ? uuid : null;
    },

    // The call id and token travel in extraHeaders and come back in the stream's `start`.
    connect: ({ streamUrl, callId, token }: StreamConnection) =>
      xml(streamXml({ streamUrl, contentType, extraHeaders: plivoStreamExtraHeaders(callId, token) })),
    reject: () => xml(rejectXml('rejected')),
    busy: () => xml(rejectXml('busy')),
    sayAndHangup: (text) => xml(speakAndHangupXml(text)),
  };
}
