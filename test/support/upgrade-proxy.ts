/**
 * The load balancer in front of several media gateways, for tests: each WebSocket upgrade goes to
 * the first gateway in `upstreams` that takes it; one answering 503 (draining) or not answering is
 * skipped and the next one tried — nginx's `proxy_next_upstream error http_503`. Once upgraded,
 * the two sockets are piped together. Production deployments use a real proxy (docs/deployment.md).
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';

export interface UpgradeProxy {
  /** ws://127.0.0.1:<port>: what GATEWAY_PUBLIC_URL points at. */
  url: string;
  /** Gateways (ws://host:port) in the order they are tried; tests may change it. */
  upstreams: string[];
  /** Upgrades a gateway refused (its URL, the status) before another took them. */
  refused: Array<{ upstream: string; status: number }>;
  /** Which gateway took each upgrade, in order. */
  routed: string[];
  stop(): Promise<void>;
}

export async function startUpgradeProxy(upstreams: string[]): Promise<UpgradeProxy> {
  const sockets = new Set<Duplex>();
  const proxy: UpgradeProxy = { url: '', upstreams: [...upstreams], refused: [], routed: [], stop: async () => undefined };
  const server = http.createServer((_req, res) => res.writeHead(404).end());

  function forward(req: http.IncomingMessage, client: Duplex, head: Buffer, index: number): void {
    const upstream = proxy.upstreams[index];
    if (!upstream) {
      client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    const target = new URL(upstream);
    const next = () => forward(req, client, head, index + 1);
    const up = http.request({ host: target.hostname, port: Number(target.port), path: req.url, method: req.method, headers: req.headers });
    up.on('upgrade', (res, upSocket: Socket, upHead) => {
      proxy.routed.push(upstream);
      sockets.add(upSocket);
      const lines = [`HTTP/1.1 101 ${res.statusMessage ?? 'Switching Protocols'}`];
      for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
      client.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (upHead.length) client.write(upHead);
      if (head.length) upSocket.write(head);
      upSocket.on('error', () => client.destroy());
      upSocket.on('close', () => {
        sockets.delete(upSocket);
        client.destroy();
      });
      client.on('close', () => upSocket.destroy());
      upSocket.pipe(client).pipe(upSocket);
    });
    up.on('response', (res) => {
      res.resume();
      proxy.refused.push({ upstream, status: res.statusCode ?? 0 });
      if (res.statusCode === 503) return next();
      client.end(`HTTP/1.1 ${res.statusCode} ${res.statusMessage}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
    });
    // Not listening (a gateway that exited): the next one.
    up.on('error', () => {
      proxy.refused.push({ upstream, status: 0 });
      next();
    });
    up.end();
  }

  server.on('upgrade', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    sockets.add(client);
    client.on('error', () => undefined);
    client.on('close', () => sockets.delete(client));
    forward(req, client, head, 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  proxy.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return proxy;
}
