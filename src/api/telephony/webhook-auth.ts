/**
 * What every public telephony route shares (routes/telephony.ts, routes/telephony-transfer.ts):
 * the vendor's own authentication of a webhook, the request in the vendor-neutral shape, the
 * answer sent as the vendor's document, and the call a URL names.
 */
import type { Request, Response } from 'express';
import type { ApiContext } from '../context';
import { forbidden, notFound } from '../errors';
import { plain } from '../../db/database';
import type { CallRow } from '../../db/models';
import { telephonyVendor } from '../../providers/telephony/registry';
import { effectivePublicBaseUrl, loadTelephonySettings } from '../../providers/telephony/settings-store';
import type { HttpAnswer, WebhookRequest } from '../../providers/telephony/types';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function send(res: Response, answer: HttpAnswer): void {
  res.status(answer.status).type(answer.contentType).send(answer.body);
}

export function webhookRequest(req: Request): WebhookRequest {
  const body = req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
  return { method: req.method, originalUrl: req.originalUrl, headers: req.headers, body, query: req.query as Record<string, unknown> };
}

/** The vendor of a webhook URL, after it authenticated the request (404 unknown vendor, 403 refused). */
export function webhookAuthenticator({ db, box, config, log }: Pick<ApiContext, 'db' | 'box' | 'config' | 'log'>) {
  return async function authenticated(provider: string, req: Request, what = 'webhook') {
    const vendor = await telephonyVendor(provider);
    if (!vendor) throw notFound(`Telephony provider ${provider}`);
    const settings = await loadTelephonySettings(db, box);
    const publicBaseUrl = effectivePublicBaseUrl(settings, config);
    const request = webhookRequest(req);
    const verdict = vendor.webhooks.verify(request, { settings: settings.vendors[vendor.name] ?? {}, publicBaseUrl });
    if (!verdict.ok) {
      log.warn(`${vendor.name} ${what} refused: ${verdict.detail}`, { path: req.path, ...verdict.log });
      throw forbidden(verdict.detail);
    }
    return { vendor, settings, publicBaseUrl, request };
  };
}

/** The call a URL names (null for an id that is not a call's). */
export function callFinder({ db }: Pick<ApiContext, 'db'>) {
  return async (callId: string): Promise<CallRow | null> => (UUID.test(callId) ? plain(await db.models.Call.findByPk(callId)) : null);
}
