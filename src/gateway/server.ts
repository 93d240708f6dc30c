/**
 * The media gateway: holds each call's audio WebSocket from the telephony provider. This module
 * owns the HTTP/WebSocket server and its lifecycle.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RunningGateway {
  port: number;
  stop(): Promise<void>;
}

export async function startGateway(port: number, host = '0.0.0.0'): Promise<RunningGateway> {
  const server = http.createServer((req, res) => {
    if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok' }));
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
