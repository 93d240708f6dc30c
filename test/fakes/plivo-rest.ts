/**
 * The fake Plivo's REST Call API (plivo-server.ts plays the calls): JSON bodies, HTTP Basic
 * `auth_id:auth_token`, Plivo's `{api_id, error}` errors with 400/401/404/405.
 *
 * - `POST /v1/Account/{auth_id}/Call/` → 201 `{api_id, message: "call fired", request_uuid}`;
 * - `POST …/Call/{call_uuid}/` `{legs: aleg, aleg_url}` transfers a live call → 202;
 * - `DELETE …/Call/{call_uuid}/` hangs up a ringing or live call → 204;
 * - `DELETE …/Request/{request_uuid}/` cancels a call still queued or ringing → 204.
 */
import crypto from 'node:crypto';
import type http from 'node:http';
import { plivoAmdProblem } from './plivo-amd';
import type { CallState } from './plivo-fake-types';
import { readCreateCall, type CreateCallRequest } from './plivo-wire';

/** What the REST API does to the calls the server plays. */
export interface PlivoCalls {
  authId: string;
  authToken: string;
  /** Places a valid outbound call request; its request_uuid. */
  place(req: CreateCallRequest, body: Record<string, unknown>): string;
  byCallUuid(uuid: string): CallState | undefined;
  byRequestUuid(uuid: string): CallState | undefined;
  /** Stops the running `<Stream>`; the call then runs `url`'s XML. */
  transfer(s: CallState, url: string): void;
  hangup(s: CallState): void;
}

export function plivoError(res: http.ServerResponse, status: number, error: string): number {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ api_id: crypto.randomUUID(), error }));
  return status;
}

function json(res: http.ServerResponse, status: number, body: object): number {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ api_id: crypto.randomUUID(), ...body }));
  return status;
}

function noContent(res: http.ServerResponse): number {
  res.writeHead(204);
  res.end();
  return 204;
}

/** Answers one REST request; the status it answered. */
export function plivoRestRoute(calls: PlivoCalls, req: http.IncomingMessage, res: http.ServerResponse, path: string, body: Record<string, unknown>): number {
  const m = /^\/v1\/Account\/([^/]+)\/(Call|Request)\/(?:([^/]+)\/)?$/.exec(path);
  const expected = `Basic ${Buffer.from(`${calls.authId}:${calls.authToken}`).toString('base64')}`;
  if (req.headers.authorization !== expected) return plivoError(res, 401, 'Authentication failed');
  if (!m || m[1] !== calls.authId) return plivoError(res, 404, 'not found');
  const [, , kind, id] = m;
  if (kind === 'Call' && !id) {
    if (req.method !== 'POST') return plivoError(res, 405, 'Method not allowed');
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) return plivoError(res, 400, 'Content-Type must be application/json');
    const create = readCreateCall(body);
    if ('error' in create) return plivoError(res, 400, create.error);
    const amdProblem = plivoAmdProblem(body);
    if (amdProblem) return plivoError(res, 400, amdProblem);
    return json(res, 201, { message: 'call fired', request_uuid: calls.place(create, body) });
  }
  if (kind === 'Call' && id && req.method === 'POST') {
    // Transfer Call API: the running XML (our <Stream>) stops; aleg_url's XML runs instead.
    const s = calls.byCallUuid(id);
    if (!s || s.record.status !== 'in-progress' || s.record.endedAtMs) return plivoError(res, 404, 'not found');
    const url = typeof body.aleg_url === 'string' ? body.aleg_url : '';
    if ((body.legs ?? 'aleg') !== 'aleg' || !/^https?:\/\//.test(url)) return plivoError(res, 400, 'aleg_url is required when legs is aleg');
    calls.transfer(s, url);
    return json(res, 202, { message: 'call transferred' });
  }
  if (req.method !== 'DELETE' || !id) return plivoError(res, 405, 'Method not allowed');
  // A call known by its CallUUID (ringing, or answered) is hung up; a ringing one ends `cancel`.
  const s = kind === 'Call' ? calls.byCallUuid(id) : calls.byRequestUuid(id);
  const live = kind === 'Call' ? ['ringing', 'in-progress'] : ['queued', 'ringing'];
  if (!s || !live.includes(s.record.status) || s.record.endedAtMs) return plivoError(res, 404, 'not found');
  calls.hangup(s);
  return noContent(res);
}
