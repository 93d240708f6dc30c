/**
 * Closes an HTTP server the way a deploy needs it: no new connections, requests in flight finish
 * (up to a grace period), idle keep-alive connections close at once. Event streams (SSE) never
 * finish by themselves: they are ended, and their clients reconnect (to another instance).
 */
import type http from 'node:http';

export interface GracefulClose {
  /** Resolves when every connection has closed; whatever is left after `graceMs` is cut. */
  close(graceMs: number): Promise<void>;
}

export function trackRequests(server: http.Server): GracefulClose {
  const inFlight = new Set<http.ServerResponse>();
  let closing = false;
  server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    inFlight.add(res);
    res.on('close', () => {
      inFlight.delete(res);
      // Its connection is idle now: while closing, nothing more may come over it.
      if (closing) server.closeIdleConnections();
    });
    if (closing) res.setHeader('connection', 'close');
  });
  let closed: Promise<void> | null = null;
  return {
    close: (graceMs) =>
      (closed ??= new Promise<void>((resolve) => {
        closing = true;
        const cut = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
        for (const res of inFlight) {
          if (!res.headersSent) res.setHeader('connection', 'close');
          if (String(res.getHeader('content-type') ?? '').startsWith('text/event-stream')) res.end();
        }
      })),
  };
}
