/**
 * A client's webhook endpoint, on 127.0.0.1: records every request and answers with scripted
 * responses (status, JSON or text body, headers, delay). Used for tool webhooks and agent event
 * webhooks in tests.
 *
 *   const hook = await startWebhookReceiver();
 *   hook.respond({ status: 200, body: { balance: 42 } });            // next request, any path
 *   hook.respond({ delay_ms: 3000 }, { path: '/slow', times: Infinity });
 *   ... hook.requests[0].body ...
 *   await hook.stop();
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  /** Lower-case header names. */
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON when the body is JSON, else the raw text ('' when empty). */
  body: unknown;
  raw: string;
  received_at: Date;
}

export interface ScriptedResponse {
  status?: number;
  /** Objects/arrays/numbers are sent as JSON; strings as text/plain unless `content_type` says otherwise. */
  body?: unknown;
  content_type?: string;
  headers?: Record<string, string>;
  /** Wait this long before answering (to provoke client timeouts). */
  delay_ms?: number;
}

type Responder = ScriptedResponse | ((req: ReceivedRequest) => ScriptedResponse);

interface Rule {
  path?: string;
  remaining: number;
  responder: Responder;
}

export interface WebhookReceiver {
  /** Base URL, e.g. http://127.0.0.1:34567 (no trailing slash). */
  url: string;
  requests: ReceivedRequest[];
  /** Queues a response for matching requests (first matching rule wins; default 1 use). */
  respond(responder: Responder, options?: { path?: string; times?: number }): void;
  /** Resolves with the first recorded request matching `predicate` (already received or future). */
  waitForRequest(predicate?: (req: ReceivedRequest) => boolean, timeout_ms?: number): Promise<ReceivedRequest>;
  /** Forgets recorded requests and scripted responses. */
  reset(): void;
  stop(): Promise<void>;
}

const DEFAULT_RESPONSE: ScriptedResponse = { status: 200, body: { ok: true } };

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  let rules: Rule[] = [];
  let waiters: Array<{ predicate: (r: ReceivedRequest) => boolean; resolve: (r: ReceivedRequest) => void }> = [];
  const pendingTimers = new Set<NodeJS.Timeout>();

  const pick = (req: ReceivedRequest): ScriptedResponse => {
    const rule = rules.find((r) => r.remaining > 0 && (r.path === undefined || r.path === req.path));
    if (!rule) return DEFAULT_RESPONSE;
    rule.remaining -= 1;
    if (rule.remaining <= 0) rules = rules.filter((r) => r !== rule);
    return typeof rule.responder === 'function' ? rule.responder(req) : rule.responder;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      let body: unknown = raw;
      if (raw && (req.headers['content-type'] ?? '').includes('json')) {
        try {
          body = JSON.parse(raw);
        } catch {
          body = raw;
        }
      }
      const received: ReceivedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
        raw,
        received_at: new Date(),
      };
      requests.push(received);
      for (const w of waiters.filter((w) => w.predicate(received))) {
        waiters = waiters.filter((x) => x !== w);
        w.resolve(received);
      }
      const scripted = pick(received);
      const send = () => {
        if (res.destroyed) return;
        const status = scripted.status ?? 200;
        const isText = typeof scripted.body === 'string';
        const payload = scripted.body === undefined ? '' : isText ? (scripted.body as string) : JSON.stringify(scripted.body);
        const contentType = scripted.content_type ?? (isText ? 'text/plain' : 'application/json');
        res.writeHead(status, { 'content-type': contentType, ...(scripted.headers ?? {}) });
        res.end(payload);
      };
      if (scripted.delay_ms) {
        const timer = setTimeout(() => {
          pendingTimers.delete(timer);
          send();
        }, scripted.delay_ms);
        pendingTimers.add(timer);
      } else send();
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respond(responder, options = {}) {
      rules.push({ path: options.path, remaining: options.times ?? 1, responder });
    },
    waitForRequest(predicate = () => true, timeout_ms = 10_000) {
      const seen = requests.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w.resolve !== done);
          reject(new Error(`no matching webhook request within ${timeout_ms} ms`));
        }, timeout_ms);
        const done = (r: ReceivedRequest) => {
          clearTimeout(timer);
          resolve(r);
        };
        waiters.push({ predicate, resolve: done });
      });
    },
    reset() {
      requests.length = 0;
      rules = [];
    },
    async stop() {
      for (const t of pendingTimers) clearTimeout(t);
      pendingTimers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
