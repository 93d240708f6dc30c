/**
 * Exotel's webhooks in neutral terms. Exotel signs nothing: its requests are taken as they come
 * (restrict them by IP at the reverse proxy, README), and what protects a call is that its
 * stream must present our per-call token, minted here and checked by the gateway.
 *
 * - The inbound URL is the Voicebot applet's URL: Exotel asks it (GET, call details in the query:
 *   `CallSid`, `CallFrom`, `CallTo`, `Direction`, …) for the WebSocket to stream to, and the
 *   answer is `{"url": "wss://…/media/exotel?call_id=…&token=…&sample-rate=8000"}`.
 * - Refusals: the applet cannot be told to speak or reject, so they are errors (404 refused,
 *   503 busy or unavailable, `{detail}` saying which); the applet then fails and the flow goes on
 *   to its next applet (the set-up puts a Hangup there).
 * - Status callbacks: status.ts.
 *
 * Exotel writes Indian numbers nationally (`09876543210`); they become E.164 (`+919876543210`).
 */
import type { HttpAnswer, InboundCall, StreamConnection, VendorWebhooks, WebhookRequest } from '../types';
import { phoneField, requireCallId, webhookParams } from '../webhook-fields';
import { configValues } from '../../../shared/config-fields';
import { EXOTEL_CONFIG } from './settings';
import { exotelField, exotelParams, parseExotelCallback } from './status';
import { exotelStreamUrl } from './stream-auth';

// Callers without a usable number: withheld, or a SIP user.
const NON_PHONE_CALLER = /^(anonymous|restricted|unknown|private|sip:[^\s<>"]{1,60})$/i;
const CALL_SID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

const json = (status: number, body: unknown): HttpAnswer => ({ status, contentType: 'application/json', body: JSON.stringify(body) });

/** `09876543210` (an Indian number with its trunk 0) → `+919876543210`; anything else unchanged. */
export function exotelNumberToE164(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  return /^0[1-9]\d{9}$/.test(v) ? `+91${v.slice(1)}` : v;
}

export function exotelWebhooks(): VendorWebhooks {
  return {
    // Nothing to check: Exotel cannot sign. See the module comment and README (IP allow-listing).
    verify: () => ({ ok: true }),

    inboundCall(req: WebhookRequest): InboundCall {
      const params = exotelParams(webhookParams(req));
      const providerCallId = requireCallId(params, 'CallSid');
      const numbers = { From: exotelNumberToE164(exotelField(params, 'CallFrom', 'From')), To: exotelNumberToE164(exotelField(params, 'CallTo', 'To')) };
      const from = phoneField(numbers, 'From', { required: false, alsoAllowed: NON_PHONE_CALLER }) ?? 'anonymous';
      const to = phoneField(numbers, 'To', { required: true })!;
      return { providerCallId, from, to };
    },

    statusUpdate: (req) => parseExotelCallback(webhookParams(req)),

    providerCallId(req) {
      const sid = exotelField(exotelParams(webhookParams(req)), 'CallSid');
      return sid && CALL_SID.test(sid) ? sid : null;
    },

    connect: ({ streamUrl, callId, token }: StreamConnection, ctx) =>
      json(200, { url: exotelStreamUrl(streamUrl, callId, token, (ctx && configValues(EXOTEL_CONFIG, ctx.config).EXOTEL_SAMPLE_RATE) ?? 8000) }),
    reject: () => json(404, { detail: 'This number does not take calls here (unknown agent, inactive number or a call that has ended)' }),
    sayAndHangup: (text) => json(503, { detail: text }),
    // The applet fails and the flow goes on to its next applet (the set-up puts a Hangup there).
    busy: () => json(503, { detail: 'All lines are busy: no media gateway has room for the call' }),
  };
}
