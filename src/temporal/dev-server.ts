/**
 * Runs `temporal server start-dev` as a child process: the single-machine Temporal server with its
 * Web UI and the platform's search attributes registered.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { CALL_SEARCH_ATTRIBUTES, CLI_TYPE_NAME } from '../shared/search-attributes';

export interface DevServerOptions {
  cliPath: string;
  port: number;
  uiPort?: number;
  /** SQLite file for persistent state; omitted = in memory. */
  dbFile?: string;
  headless?: boolean;
  namespace?: string;
  extraArgs?: string[];
  /**
   * In a process group of its own: a Ctrl-C in the terminal (SIGINT to the whole foreground group)
   * then reaches only the platform, which drains its calls and stops this server last.
   */
  ownProcessGroup?: boolean;
}

export interface DevServer {
  address: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export function waitForPort(port: number, host = '127.0.0.1', timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const socket = net.connect({ port, host });
      socket.once('connect', () => (socket.destroy(), resolve()));
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`nothing is listening on ${host}:${port} after ${timeoutMs} ms`));
        else setTimeout(attempt, 200);
      });
    };
    attempt();
  });
}

export function getFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port), '--log-level', 'error'];
  if (options.namespace && options.namespace !== 'default') args.push('--namespace', options.namespace);
  // SQLite's default rollback journal writes, syncs and deletes a journal file per transaction: in a
  // 100-call burst Temporal fell seconds behind (turns p99 3.5 s). A write-ahead log keeps every
  // commit on disk (synchronous stays FULL) for a fraction of that (docs/performance.md).
  if (options.dbFile) args.push('--db-filename', options.dbFile, '--sqlite-pragma', 'journal_mode=wal');
  if (options.headless) args.push('--headless');
  // The Web UI has no login: it listens on loopback only, like the gRPC frontend (README, Security).
  else if (options.uiPort) args.push('--ui-ip', '127.0.0.1', '--ui-port', String(options.uiPort));
  for (const key of CALL_SEARCH_ATTRIBUTES) args.push('--search-attribute', `${key.name}=${CLI_TYPE_NAME[key.type]}`);
  // Worker Versioning needs no flag on this server (1.29: docs/versioning.md). A worker's deployment
  // is its task queue by default, and every test has a queue of its own: past the default 100
  // deployments per namespace a new one is refused and its workflows never start.
  args.push('--dynamic-config-value', 'matching.maxDeployments=10000');
  args.push(...(options.extraArgs ?? []));

  const child = spawn(options.cliPath, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: options.ownProcessGroup === true });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`temporal dev server exited (${code}): ${stderr.trim()}`))),
  );
  await Promise.race([waitForPort(options.port), exited]);
  exited.catch(() => undefined);

  return {
    address: `127.0.0.1:${options.port}`,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  };
}
