/**
 * A WHATWG `fetch` that goes out through the outbound request guard, for clients that take a fetch
 * function (the MCP SDK's transports). Node's own fetch resolves and connects on its own, so it
 * cannot be pointed at the guard; this one uses node:http with the guard's DNS lookup and
 * connection pool, exactly as the webhook client does through got.
 *
 * Redirects are not followed: the 3xx comes back as it is (an MCP endpoint that redirects is a
 * misconfiguration, and following it would need a second check of the new URL). Bodies stream, so
 * server-sent events arrive as they are sent.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { OutboundBlockedError, type OutboundGuard } from './outbound-guard';

export type GuardedFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

function requestHeaders(headers: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(headers).forEach((value, name) => (out[name] = value));
  return out;
}

async function bodyBuffer(body: RequestInit['body']): Promise<Buffer | null> {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return Buffer.from(body);
  return Buffer.from(await new Response(body).arrayBuffer());
}

export function guardedFetch(guard: OutboundGuard): GuardedFetch {
  const agents = guard.gotOptions().agent as { http: http.Agent; https: https.Agent };
  return async (input, init = {}) => {
    const url = new URL(typeof input === 'string' ? input : input.href);
    const problem = guard.urlProblem(url);
    if (problem) throw new OutboundBlockedError(problem);
    const body = await bodyBuffer(init.body);
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();
    const lib = url.protocol === 'https:' ? https : http;
    return new Promise<Response>((resolve, reject) => {
      const req = lib.request(
        url,
        {
          method: init.method ?? 'GET',
          headers: { ...requestHeaders(init.headers), ...(body ? { 'content-length': String(body.length) } : {}) },
          agent: url.protocol === 'https:' ? agents.https : agents.http,
          lookup: guard.lookup as never,
          signal,
        },
        (res) => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (Array.isArray(value)) value.forEach((v) => headers.append(name, v));
            else if (value !== undefined) headers.set(name, value);
          }
          const status = res.statusCode ?? 502;
          // A Response cannot carry a body with these statuses.
          const empty = status === 204 || status === 304 || init.method === 'HEAD';
          if (empty) res.resume();
          resolve(
            new Response(empty ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>), {
              status,
              statusText: res.statusMessage,
              headers,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(body ?? undefined);
    });
  };
}
