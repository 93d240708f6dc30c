import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiContext } from './context';
import { createApp } from './app';
import { answerClientErrors } from './http/conformance';
import { activeCallsByProvider } from '../calls/concurrency';
import { initProcessMetrics, trackActiveCalls } from '../observability/metrics';
import { trackRequests } from '../shared/graceful-close';

export interface RunningApi {
  server: http.Server;
  port: number;
  url: string;
  /** Takes no new connections and lets requests in flight finish (up to SHUTDOWN_GRACE_SECS). */
  stop(): Promise<void>;
}

/** Starts the HTTP API; port 0 picks a free port (tests). */
export async function startApi(ctx: ApiContext, port: number, host = '0.0.0.0'): Promise<RunningApi> {
  initProcessMetrics();
  const server = http.createServer(createApp(ctx));
  // An idle keep-alive connection outlives its clients' and proxies' own idle timeouts (fetch's
  // 4 s, a load balancer's 60 s), so the server never closes one a client is just reusing — the
  // client would see ECONNRESET on a request the server never read.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  answerClientErrors(server);
  const requests = trackRequests(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const untrackCalls = trackActiveCalls(() => activeCallsByProvider(ctx.db));
  const actual = (server.address() as AddressInfo).port;
  return {
    server,
    port: actual,
    url: `http://127.0.0.1:${actual}`,
    stop: () => {
      untrackCalls();
      return requests.close(ctx.config.SHUTDOWN_GRACE_SECS * 1000);
    },
  };
}
