/**
 * A TCP proxy a test can take down: while down it refuses new connections and has cut the open
 * ones, as a dependency that restarts or drops off the network does. Used to make PostgreSQL go
 * away under the real API.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Cuts every connection and refuses new ones. */
  down(): void;
  up(): void;
  stop(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let isDown = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (isDown) return void client.destroy();
    const upstream = net.connect(target);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    down() {
      isDown = true;
      for (const s of sockets) s.destroy();
    },
    up() {
      isDown = false;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A TCP load balancer in front of several servers, as a production load balancer in front of media
 * gateways: connections go to the targets in turn, and one that refuses the connection (a dead
 * gateway) is skipped for the next — like nginx's `proxy_next_upstream error`. `targetOf(port)`
 * says which target a client's connection (by its local port) went to.
 */
export interface TcpBalancer {
  port: number;
  /** How many connections each target took, by target port. */
  readonly taken: Map<number, number>;
  stop(): Promise<void>;
}

export async function startTcpBalancer(targets: Array<{ host: string; port: number }>): Promise<TcpBalancer> {
  let next = 0;
  const taken = new Map<number, number>();
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  };
  const server = net.createServer((client) => {
    track(client);
    client.pause();
    const attempt = (tries: number) => {
      if (tries >= targets.length) return void client.destroy();
      const target = targets[next++ % targets.length]!;
      const upstream = net.connect(target);
      const failover = () => attempt(tries + 1);
      upstream.once('error', failover);
      upstream.once('connect', () => {
        upstream.off('error', failover);
        track(upstream);
        taken.set(target.port, (taken.get(target.port) ?? 0) + 1);
        client.pipe(upstream).pipe(client);
        client.resume();
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
    };
    attempt(0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    taken,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
