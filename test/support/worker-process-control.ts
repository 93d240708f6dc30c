/**
 * Platform processes (worker, media gateway) in their own OS processes, so tests can kill them
 * with SIGKILL in the middle of a call.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Harness } from './harness';

const ROOT = path.join(__dirname, '..', '..');

/** Starts a TypeScript entry point and resolves once it prints a line matching `ready`. */
export async function spawnReady(script: string, env: Record<string, string | undefined>, ready: RegExp) {
  // `node --import tsx` runs the script in this very process (the tsx CLI would fork a grandchild
  // that a SIGKILL to the child would leave running).
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, script)], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start: ${stderr}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      const m = ready.exec(d.toString());
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code}): ${stderr}`));
    });
  });
  child.removeAllListeners('exit');
  return { child, match };
}

/** The environment a platform process needs to join the harness's database, Temporal and queue. */
export function harnessEnv(h: Harness): Record<string, string | undefined> {
  return {
    DATABASE_URL: h.dbUrl,
    TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS,
    TEMPORAL_TASK_QUEUE: h.taskQueue,
    ENCRYPTION_KEY: h.config.ENCRYPTION_KEY,
    JWT_SECRET: h.config.JWT_SECRET,
    DATA_DIR: h.config.dataDir,
    WEBHOOK_ALLOWED_NETWORKS: h.config.WEBHOOK_ALLOWED_NETWORKS,
    // A test's processes share the machine with the test itself: room is counted in calls.
    GATEWAY_MAX_LOAD: String(h.config.GATEWAY_MAX_LOAD),
    GATEWAY_MAX_HANDOFF_MS: String(h.config.GATEWAY_MAX_HANDOFF_MS),
    GATEWAY_TURN_RUN_LOAD: String(h.config.GATEWAY_TURN_RUN_LOAD),
  };
}

/** A call worker for the harness's database and task queue (test/support/worker-process.ts). */
export async function spawnWorkerProcess(h: Harness, env: Record<string, string> = {}): Promise<ChildProcess> {
  return (await spawnReady('worker-process.ts', { ...harnessEnv(h), ...env }, /worker ready/)).child;
}

/** A media gateway on GATEWAY_PORT (test/support/gateway-process.ts). */
export async function spawnGatewayProcess(h: Harness, env: Record<string, string> = {}) {
  const { child, match } = await spawnReady('gateway-process.ts', { ...harnessEnv(h), ...env }, /gateway ready (\{.*\})/);
  return { child, ...(JSON.parse(match[1]!) as { url: string; taskQueue: string }) };
}

/** How a process ended: its exit code, or the signal that killed it, and when. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  atMs: number;
}

export function exitOf(child: ChildProcess): Promise<ProcessExit> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode, atMs: Date.now() });
    else child.once('exit', (code, signal) => resolve({ code, signal, atMs: Date.now() }));
  });
}

export interface GatewayMainProcess {
  child: ChildProcess;
  port: number;
  url: string;
  taskQueue: string;
  exited: Promise<ProcessExit>;
}

/**
 * `npm run gateway` itself (src/gateway/main.ts) in its own process: its signal handling (the
 * drain) is what runs, as in production. Ready once it prints where it listens.
 */
export async function spawnGatewayMain(h: Harness, env: Record<string, string> = {}): Promise<GatewayMainProcess> {
  const { child, match } = await spawnReady(path.join('..', '..', 'src', 'gateway', 'main.ts'), { ...harnessEnv(h), ...env }, /Media gateway\s+ws:\/\/localhost:(\d+)/);
  const exited = exitOf(child);
  const port = Number(match[1]);
  const health = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { task_queue: string };
  return { child, port, url: `ws://127.0.0.1:${port}`, taskQueue: health.task_queue, exited };
}

export function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
