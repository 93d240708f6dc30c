/**
 * CORS for POST /api/calls/web, the one route a page on another site may call (with a publishable
 * key, docs/web-calls.md). The preflight carries no key, only the page's origin: it is answered
 * when some live key allows that origin; the call itself is then checked against its own key's
 * origins (routes/web-calls.ts), which alone set Access-Control-Allow-Origin on the answer.
 * No other route answers CORS, and no credentials (cookies) are ever allowed.
 */
import type { RequestHandler } from 'express';
import type { Database } from '../../db/database';
import { anyKeyAllowsOrigin } from '../auth/publishable-keys';

export const WEB_CALL_PATH = '/api/calls/web';
const PREFLIGHT_MAX_AGE_SECS = 600;

/** The headers that let the page at `origin` read the answer. */
export function corsHeaders(origin: string): Record<string, string> {
  return { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
}

export function webCallCors(db: Database): RequestHandler {
  return (req, res, next) => {
    if (req.path !== WEB_CALL_PATH) return next();
    res.vary('Origin');
    if (req.method !== 'OPTIONS') return next();
    const origin = req.get('origin');
    if (!origin) return void res.status(400).json({ detail: 'A CORS preflight needs an Origin' });
    anyKeyAllowsOrigin(db, origin).then(
      (allowed) => {
        if (!allowed) return void res.status(403).json({ detail: `No publishable key allows origin ${origin}` });
        res
          .status(204)
          .set({
            ...corsHeaders(origin),
            'Access-Control-Allow-Methods': 'POST',
            'Access-Control-Allow-Headers': 'authorization, content-type',
            'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECS),
          })
          .end();
      },
      (err: unknown) => next(err),
    );
  };
}
