/**
 * The plumbing shared by the vendor WebSocket fakes: an HTTP server on 127.0.0.1 that checks
 * each upgrade request first (so a bad key or parameter is refused with a real HTTP status,
 * headers and body, as the vendors do) and hands accepted sockets to the fake.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';

export interface UpgradeRejection {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface WsFakeServer {
  /** ws://127.0.0.1:<port>, what the *_BASE_URL settings take. */
  url: string;
  port: number;
  /**
   * Connections open now (accepted and not yet closed), optionally only those whose path starts
   * with `pathPrefix` — what a vendor counts against an account's concurrent-connection limit.
   */
  openConnections(pathPrefix?: string): number;
  /** Closes every open connection from the server side, as a vendor outage would. */
  dropConnections(code?: number, reason?: string): void;
  stop(): Promise<void>;
}

export interface WsFakeHandlers {
  /** Return a rejection to refuse the upgrade. */
  check(req: http.IncomingMessage, url: URL): UpgradeRejection | undefined;
  connected(ws: WebSocket, req: http.IncomingMessage, url: URL): void;
  /** Plain HTTP requests (a vendor's REST endpoints beside its socket); 426 when absent. */
  request?: http.RequestListener;
}

export async function startWsFakeServer(handlers: WsFakeHandlers, port = 0): Promise<WsFakeServer> {
  const server = http.createServer(
    handlers.request ??
      ((_req, res) => {
        res.writeHead(426, { 'content-type': 'text/plain' }).end('WebSocket upgrade required');
      }),
  );
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const paths = new Map<WebSocket, string>();
  let stopping = false;
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    // A client reconnecting while the fake stops (the Speech SDK does at once) must not get in:
    // wss.close() waits for every client, so one let in now would hold stop() for ever.
    if (stopping) return void socket.destroy();
    const url = new URL(req.url ?? '/', 'ws://127.0.0.1');
    const rejection = handlers.check(req, url);
    if (rejection) {
      reject(socket, rejection);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      paths.set(ws, url.pathname);
      ws.once('close', () => paths.delete(ws));
      handlers.connected(ws, req, url);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actualPort = (server.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${actualPort}`,
    port: actualPort,
    openConnections(pathPrefix = '') {
      let n = 0;
      for (const path of paths.values()) if (path.startsWith(pathPrefix)) n++;
      return n;
    },
    dropConnections(code = 1011, reason = 'Internal server error') {
      for (const ws of wss.clients) ws.close(code, reason);
    },
    async stop() {
      stopping = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

function reject(socket: Duplex, { status, headers = {}, body = '' }: UpgradeRejection): void {
  const lines = [`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  lines.push(`Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close', '', body);
  socket.end(lines.join('\r\n'));
}

/** Sends a JSON text frame if the socket is still open; reports whether it went out. */
export function sendJson(ws: WebSocket, msg: unknown): boolean {
  if (ws.readyState !== WebSocket.OPEN) return false;
  ws.send(JSON.stringify(msg));
  return true;
}
