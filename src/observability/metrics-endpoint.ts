/**
 * `GET /metrics` for every process (the API, the gateway, a standalone worker's metrics listener,
 * which also answers `/healthz`).
 *
 * Who may scrape: with METRICS_TOKEN set, whoever sends `Authorization: Bearer <METRICS_TOKEN>`
 * (from anywhere). Without it, only a peer on this machine (loopback) talking directly, not
 * through a proxy (no Forwarded / X-Forwarded-For header): a reverse proxy on the same host must
 * not turn the public internet into a loopback scraper.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { renderMetrics } from './metrics';

export interface MetricsRequest {
  headers: http.IncomingHttpHeaders;
  remoteAddress: string | undefined;
}

export type MetricsAccess = 'ok' | 'unauthorized' | 'forbidden';

export function metricsAccess(req: MetricsRequest, token: string | undefined): MetricsAccess {
  if (token) {
    const sent = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim() ?? '';
    return sameSecret(sent, token) ? 'ok' : 'unauthorized';
  }
  const proxied = req.headers['x-forwarded-for'] !== undefined || req.headers.forwarded !== undefined;
  return !proxied && isLoopback(req.remoteAddress) ? 'ok' : 'forbidden';
}

/** Answers a metrics request on a plain Node (or Express) request/response pair. */
export async function serveMetrics(req: http.IncomingMessage, res: http.ServerResponse, token: string | undefined): Promise<void> {
  const access = metricsAccess({ headers: req.headers, remoteAddress: req.socket.remoteAddress }, token);
  if (access !== 'ok') {
    const [status, detail] =
      access === 'unauthorized' ? [401, 'Unauthorized: send Authorization: Bearer <METRICS_TOKEN>'] : [403, 'Forbidden: /metrics answers only local scrapes unless METRICS_TOKEN is set'];
    const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json' };
    if (status === 401) headers['www-authenticate'] = 'Bearer realm="metrics"';
    res.writeHead(status, headers).end(JSON.stringify({ detail }));
    return;
  }
  try {
    const { contentType, body } = await renderMetrics();
    res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(body);
  } catch {
    res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: 'Unavailable: metrics could not be collected' }));
  }
}

export interface MetricsServer {
  port: number;
  stop(): Promise<void>;
}

/**
 * The listener of a process without an HTTP server of its own (the standalone worker): /metrics,
 * and /healthz (no auth, for orchestrators' probes) answering 200 while `ready()` says so, else 503.
 */
export async function startMetricsServer(port: number, host: string, token: string | undefined, ready: () => boolean = () => true): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const pathname = (req.url ?? '').split('?')[0];
    if (pathname === '/metrics' && req.method === 'GET') return void serveMetrics(req, res, token);
    if (pathname === '/healthz') {
      const ok = ready();
      const body = ok ? { status: 'ok' } : { status: 'down', detail: 'Unavailable: not polling its task queue' };
      res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: 'Not found' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

function sameSecret(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return a.length > 0 && crypto.timingSafeEqual(ha, hb);
}
