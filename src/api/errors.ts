/**
 * Every non-2xx answer of the API is `{ "detail": string }`. Handlers throw HttpError (or one of
 * the helpers below); the error middleware turns anything else into a 500 without a stack trace.
 */
import { isGrpcServiceError, ServiceError } from '@temporalio/client';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { z } from 'zod';
import { isDatabaseOutage } from '../db/outage';
import type { Logger } from '../shared/logger';
import { retryAfterHeader } from '../shared/retry-after';
import { isTemporalUnreachable } from '../temporal/unreachable';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

export const badRequest = (detail: string) => new HttpError(400, detail);
export const unauthorized = (detail = 'Not authenticated') => new HttpError(401, detail);
export const forbidden = (detail = 'Not allowed') => new HttpError(403, detail);
export const notFound = (what: string) => new HttpError(404, `${what} not found`);
export const conflict = (detail: string) => new HttpError(409, detail);
export const unprocessable = (field: string, message: string) => new HttpError(422, `${field}: ${message}`);
export const unavailable = (detail: string) => new HttpError(503, detail);

/** A call service error as the API's answer (with Retry-After when trying again can help). */
export function callHttpError(err: { status: number; message: string; retryAfterSecs: number | null }): HttpError {
  return new HttpError(err.status, err.message, err.retryAfterSecs === null ? {} : { 'Retry-After': String(err.retryAfterSecs) });
}

/** A missing dependency's error as the 503 the client can retry, or null for anything else. */
function dependencyUnavailable(err: unknown): HttpError | null {
  const headers = retryAfterHeader('dependencyAway');
  if (isDatabaseOutage(err)) return new HttpError(503, 'The database is unavailable; try again shortly', headers);
  const temporalError = err instanceof ServiceError || isGrpcServiceError(err);
  if (temporalError && isTemporalUnreachable(err)) return new HttpError(503, 'Temporal is unavailable; try again shortly', headers);
  return null;
}

/** Turns zod issues into one readable line naming each offending field. */
export function describeIssues(issues: z.core.$ZodIssue[], prefix = ''): string {
  return issues
    .slice(0, 5)
    .map((issue) => {
      const field = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
      return field ? `${field}: ${issue.message}` : issue.message;
    })
    .join('; ');
}

export const notFoundRoute: RequestHandler = (req, _res, next) => {
  next(new HttpError(404, `No route for ${req.method} ${req.path}`));
};

export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    let status = 500;
    let detail = 'Internal server error';
    let headers: Record<string, string> = {};
    if (err instanceof HttpError) {
      ({ status, detail, headers } = err);
    } else if (err?.type === 'entity.parse.failed') {
      status = 400;
      detail = 'Malformed JSON body';
    } else if (err?.type === 'entity.too.large') {
      status = 413;
      detail = `Request body is larger than the limit of ${err.limit} bytes`;
    } else if (err?.name === 'UnauthorizedError') {
      status = 401;
      detail = err.code === 'invalid_token' && /expired/i.test(err.message) ? 'Token expired' : 'Invalid or missing credentials';
    } else if (typeof err?.status === 'number' && err.status >= 400 && err.status < 500) {
      status = err.status;
      detail = err.expose && err.message ? err.message : 'Bad request';
    } else {
      const down = dependencyUnavailable(err);
      if (down) ({ status, detail, headers } = down);
    }
    if (status === 503) log.warn('request failed: a dependency is unavailable', { method: req.method, path: req.path, detail, error: (err as Error)?.message });
    else if (status >= 500) log.error('request failed', { method: req.method, path: req.path, error: err });
    if (res.headersSent) return res.end();
    res.status(status).set(headers).json({ detail });
  };
}
