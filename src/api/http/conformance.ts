/**
 * HTTP conformance at the edge, so that every answer is what a generated client expects:
 * - input errors (malformed JSON, a body over the limit, NUL bytes…) are held until the route has
 *   checked who is asking: an anonymous request is told 401, a member on an admin route 403,
 *   before anyone is told their body is bad;
 * - a known path asked with a method it does not have is 405 with `Allow`, not 404;
 * - a request Node's HTTP parser rejects (a control byte in a header, a header too large) still
 *   gets a `{detail}` JSON body, written on the socket before it closes.
 * Dates that reach a response as Date objects are written in the API's one timestamp form.
 */
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Request, RequestHandler } from 'express';
import { apiTimestamp } from '../../shared/time';
import { HttpError } from '../errors';

type WithInputError = Request & { inputError?: unknown };

/** Runs `middleware`; an error it reports is kept on the request for the route to raise after its access checks. */
export function holdInputErrors(middleware: RequestHandler): RequestHandler {
  return (req, res, next) => {
    middleware(req, res, (err?: unknown) => {
      if (err && err !== 'route' && err !== 'router') (req as WithInputError).inputError = err;
      next();
    });
  };
}

/** The input error held for this request, raised once the route knows the caller may call it. */
export function raiseHeldInputError(req: Request): void {
  const err = (req as WithInputError).inputError;
  if (err !== undefined) throw err;
}

/**
 * A request that matched no route: raises its held input error (a POST of bad JSON to a path that
 * only has GET is still a bad request), then 405 with `Allow` if another method has the path.
 */
export function methodNotAllowed(paths: Array<{ method: string; path: string }>): RequestHandler {
  const known = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  for (const { method, path } of paths) {
    const entry = known.get(path) ?? { pattern: pathPattern(path), methods: new Set<string>() };
    entry.methods.add(method.toUpperCase());
    if (method.toUpperCase() === 'GET') entry.methods.add('HEAD');
    known.set(path, entry);
  }
  return (req, _res, next) => {
    const allowed = new Set<string>();
    for (const { pattern, methods } of known.values()) if (pattern.test(req.path)) for (const m of methods) allowed.add(m);
    if (allowed.size === 0 || allowed.has(req.method)) return next();
    const allow = [...allowed].sort().join(', ');
    next(new HttpError(405, `${req.method} is not allowed on ${req.path}; allowed: ${allow}`, { Allow: allow }));
  };
}

/** `/api/agents/{agent_id}` → a pattern matching one path segment per parameter. */
function pathPattern(path: string): RegExp {
  const escaped = path
    .split(/\{\w+\}/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]+');
  return new RegExp(`^${escaped}/?$`);
}

/** Status and detail for an error Node's HTTP parser raised before the app saw the request. */
function parserErrorAnswer(err: Error & { code?: string }): { status: number; detail: string } {
  if (err.code === 'HPE_HEADER_OVERFLOW') return { status: 431, detail: 'Request headers are too large' };
  if (err.code === 'HPE_INVALID_HEADER_TOKEN' || err.code === 'HPE_INVALID_VALUE') {
    return { status: 400, detail: 'Malformed request header (a character HTTP does not allow in a header name or value)' };
  }
  return { status: 400, detail: 'Malformed HTTP request' };
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 431: 'Request Header Fields Too Large' };

/** Answers parser-level errors with `{detail}` JSON instead of Node's bare 400. */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    // A connection reset or a timeout has no one to answer; a socket already answering keeps its answer.
    if (err.code === 'ECONNRESET' || !socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const { status, detail } = parserErrorAnswer(err);
    const body = JSON.stringify({ detail });
    socket.end(
      `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

/**
 * res.json's replacer: a Date (JSON.stringify has already turned it into `…T…Z` with
 * milliseconds) is written in the API's timestamp form instead. `this[key]` is the value before
 * toJSON, so user data that merely looks like a date is left alone.
 */
export function timestampReplacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  return raw instanceof Date ? apiTimestamp(raw) : value;
}
