/**
 * Starts the real platform pieces for one test file: its own PostgreSQL database, a Temporal
 * client and worker on a task queue of its own, and the HTTP API on a free port. Nothing is mocked.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { Runtime, DefaultLogger } from '@temporalio/worker';
import { loadConfig, type Config } from '../../src/config';
import { connectDatabase, type Database } from '../../src/db/database';
import { ensureAdmin } from '../../src/api/auth/accounts';
import type { ApiContext, Notifier } from '../../src/api/context';
import { startApi, type RunningApi } from '../../src/api/server';
import type { GatewayDeps } from '../../src/gateway/server';
import { SecretBox } from '../../src/security/crypto';
import { createLogger } from '../../src/shared/logger';
import { connectTemporal } from '../../src/temporal/client';
import { startTracing } from '../../src/observability/tracing/tracing';
import { startWorker, type RunningWorker } from '../../src/worker/worker';
import { cloneTestDatabase } from './postgres';

export const ADMIN_EMAIL = 'admin@example.com';
export const ADMIN_PASSWORD = 'correct-horse-battery';

let runtimeInstalled = false;
function quietTemporalRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // already installed in this process
  }
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface Harness {
  config: Config;
  db: Database;
  dbUrl: string;
  box: SecretBox;
  temporal: Client;
  taskQueue: string;
  api: RunningApi;
  ctx: ApiContext;
  /** Password-reset tokens delivered by the test notifier, by email. */
  resetTokens: Map<string, string>;
  adminToken(): Promise<string>;
  request<T = any>(method: string, path: string, options?: { body?: unknown; token?: string | null; headers?: Record<string, string>; raw?: string }): Promise<ApiResponse<T>>;
  startWorker(overrides?: Partial<Config>): Promise<RunningWorker>;
  /** What startGateway needs to run against this harness (its Temporal, secret and database). */
  gatewayDeps(): GatewayDeps;
  stop(): Promise<void>;
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'vap-data-')),
    TEMPORAL_ADDRESS: process.env.VAP_TEST_TEMPORAL_ADDRESS,
    TEMPORAL_TASK_QUEUE: `test-${crypto.randomBytes(4).toString('hex')}`,
    JWT_SECRET: crypto.randomBytes(24).toString('base64url'),
    ENCRYPTION_KEY: crypto.randomBytes(32).toString('base64'),
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    LOG_LEVEL: 'error',
    // Every fake (tool backends, webhook receivers) listens on loopback; the guard stays on for the rest.
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    // A gateway started by a test shares this process's event loop with the API, the worker, the
    // fakes and the callers: its load is the test's, not the gateway's. Room is counted in calls.
    GATEWAY_MAX_LOAD: '100',
    // Likewise a test's workflows answer as fast as a machine running jest lets them: no hand-off
    // lag closes the door (gateway-admission.test.ts drives it on its own).
    GATEWAY_MAX_HANDOFF_MS: '0',
    // For the same reason turn runs would start and stop with the test's own load (a CI run once
    // held a browser test's turn for seconds): never, unless a test asks for them ('0': always).
    GATEWAY_TURN_RUN_LOAD: '100',
    // A test's teardown must not wait the production grace for requests and activities it left.
    SHUTDOWN_GRACE_SECS: '2',
    ...overrides,
  });
}

export interface HarnessOptions {
  env?: Record<string, string>;
  worker?: boolean;
  /** Rewrites the URL the API and worker reach PostgreSQL at (e.g. through a TcpProxy). */
  databaseVia?: (url: string) => string;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  quietTemporalRuntime();
  const config = testConfig(options.env);
  // A test that sets OTEL_EXPORTER_OTLP_ENDPOINT traces the whole process (otel-traces.test.ts).
  startTracing(config);
  const cloned = await cloneTestDatabase();
  const dbUrl = options.databaseVia ? options.databaseVia(cloned) : cloned;
  const db = connectDatabase(dbUrl, { poolMax: 5 });
  const box = new SecretBox(config.ENCRYPTION_KEY!);
  const temporal = await connectTemporal(config.TEMPORAL_ADDRESS!, config.TEMPORAL_NAMESPACE);
  await ensureAdmin(db, ADMIN_EMAIL, ADMIN_PASSWORD);
  const resetTokens = new Map<string, string>();
  const notifier: Notifier = { sendPasswordReset: async (email, token) => void resetTokens.set(email, token) };
  const ctx: ApiContext = { config, db, jwtSecret: config.JWT_SECRET!, box, temporal, notifier, log: createLogger('api') };
  const api = await startApi(ctx, 0, '127.0.0.1');
  const workers: RunningWorker[] = [];
  let token: string | undefined;

  const harness: Harness = {
    config,
    db,
    dbUrl,
    box,
    temporal,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    api,
    ctx,
    resetTokens,
    async adminToken() {
      if (!token) {
        const res = await harness.request('POST', '/api/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }, token: null });
        if (res.status !== 200) throw new Error(`admin login failed: ${res.status} ${JSON.stringify(res.body)}`);
        token = res.body.access_token as string;
      }
      return token;
    },
    async request(method, urlPath, opts = {}) {
      const auth = opts.token === null ? undefined : (opts.token ?? (await harness.adminToken()));
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      if (auth) headers.authorization = `Bearer ${auth}`;
      let body: string | undefined = opts.raw;
      if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] = 'application/json';
      } else if (opts.raw !== undefined) headers['content-type'] ??= 'application/json';
      const res = await fetch(`${api.url}${urlPath}`, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      if ((res.headers.get('content-type') ?? '').includes('application/json') && text) parsed = JSON.parse(text);
      return { status: res.status, body: parsed as any, headers: res.headers };
    },
    async startWorker(overrides = {}) {
      const worker = await startWorker({
        address: config.TEMPORAL_ADDRESS!,
        namespace: config.TEMPORAL_NAMESPACE,
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        deps: { config: { ...config, ...overrides }, db, box, log: createLogger('worker') },
        workflowBundle: { codePath: process.env.VAP_TEST_WORKFLOW_BUNDLE! },
      });
      workers.push(worker);
      return worker;
    },
    gatewayDeps() {
      return { config, temporal, address: config.TEMPORAL_ADDRESS!, namespace: config.TEMPORAL_NAMESPACE, streamSecret: config.JWT_SECRET!, databaseUrl: dbUrl };
    },
    async stop() {
      for (const w of workers) await w.stop();
      await api.stop();
      await temporal.connection.close();
      await db.close();
    },
  };
  if (options.worker) await harness.startWorker();
  return harness;
}
