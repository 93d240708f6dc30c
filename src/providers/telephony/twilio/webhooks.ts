/**
 * Twilio's webhooks in neutral terms: X-Twilio-Signature checks, the voice webhook of an incoming
 * call, status callbacks, and the TwiML answers.
 *
 * Twilio only acts on a 200 answer to a voice webhook (anything else makes it say "an application
 * error has occurred"), so every decision about a call — refusals included — is 200 TwiML. Only a
 * request that is not a well-formed Twilio webhook gets a 4xx `{detail}`: no signature (403), no
 * CallSid (400), malformed numbers or oversized fields (422). Twilio never sends those.
 */
import type { HttpAnswer, InboundCall, VendorWebhooks, WebhookRequest, WebhookVerdict } from '../types';
import { field, phoneField, requireCallId, webhookParams } from '../webhook-fields';
import { publicRequestUrl } from '../public-url';
import { TWILIO_SIGNATURE_HEADER, validateTwilioHttpRequest } from './signature';
import { parseTwilioAmdCallback } from './amd';
import { parseTwilioStatusCallback } from './status';
import { connectStreamTwiml, rejectTwiml, sayAndHangupTwiml } from './twiml';

// Twilio's words for callers without a phone number: a withheld number, a Voice SDK client, a SIP URI.
const NON_PHONE_CALLER = /^(anonymous|restricted|unknown|client:[\w.@+-]{1,56}|sip:[^\s<>"]{1,60})$/i;

const twiml = (body: string): HttpAnswer => ({ status: 200, contentType: 'text/xml', body });

export const twilioWebhooks: VendorWebhooks = {
  verify(req, { settings, publicBaseUrl }): WebhookVerdict {
    const authToken = settings.auth_token as string | null;
    if (!authToken) return { ok: false, detail: 'Twilio is not configured: no twilio_auth_token to check X-Twilio-Signature with' };
    if (!req.headers[TWILIO_SIGNATURE_HEADER]) return { ok: false, detail: 'Missing X-Twilio-Signature' };
    if (!validateTwilioHttpRequest(req, { authToken, publicBaseUrl })) {
      // Usually public_base_url differs from the URL given to Twilio (scheme, host, port or prefix).
      return { ok: false, detail: 'Invalid X-Twilio-Signature', log: { checked_url: publicRequestUrl(publicBaseUrl, req.originalUrl) } };
    }
    return { ok: true };
  },

  inboundCall(req: WebhookRequest): InboundCall {
    const params = webhookParams(req);
    const providerCallId = requireCallId(params, 'CallSid');
    const from = phoneField(params, 'From', { required: false, alsoAllowed: NON_PHONE_CALLER }) ?? 'anonymous';
    const to = phoneField(params, 'To', { required: true, alsoAllowed: /^sip:[^\s<>"]{1,60}$/i })!;
    return { providerCallId, from, to };
  },

  statusUpdate: (req) => parseTwilioStatusCallback(webhookParams(req)),

  machineDetection: (req) => parseTwilioAmdCallback(webhookParams(req)),

  providerCallId(req) {
    const sid = field(webhookParams(req), 'CallSid');
    return sid && /^CA[0-9a-f]{32}$/i.test(sid) ? sid : null;
  },

  // Twilio cannot put a query string on a <Stream> URL: call id and token go as <Parameter>s.
  connect: ({ streamUrl, callId, token }) => twiml(connectStreamTwiml({ streamUrl, parameters: { call_id: callId, token } })),
  reject: () => twiml(rejectTwiml('rejected')),
  busy: () => twiml(rejectTwiml('busy')),
  sayAndHangup: (text) => twiml(sayAndHangupTwiml(text)),
};
