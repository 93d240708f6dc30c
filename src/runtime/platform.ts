/**
 * Starts the processes of the platform in one Node process for `npm start`, or one of them for
 * scaled deployments (`npm run api|worker|gateway`). Every part has a stop function; stopping runs
 * them in reverse order. A gateway part drains first (stop-signals.ts).
 */
import crypto from 'node:crypto';
import type { Client } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig, type Config } from '../config';
import { startTracing } from '../observability/tracing/tracing';
import { ensureAdmin } from '../api/auth/accounts';
import { logNotifier } from '../api/notifier';
import { startApi } from '../api/server';
import { startGateway, type RunningGateway } from '../gateway/server';
import { SecretBox } from '../security/crypto';
import { resolveSecrets } from '../security/local-secrets';
import { secureDataDir } from '../security/data-files';
import { startMetricsServer } from '../observability/metrics-endpoint';
import { initProcessMetrics } from '../observability/metrics';
import { createLogger, setLogLevel } from '../shared/logger';
import { connectTemporal } from '../temporal/client';
import { startWorker } from '../worker/worker';
import { openDatabase } from './database';
import { applyNice } from './priority';
import { Readiness } from './readiness';
import { stopOnSignals } from './stop-signals';
import { resolveTemporal } from './temporal';

export type Part = 'api' | 'worker' | 'gateway';

export interface Platform {
  config: Config;
  urls: Record<string, string>;
  /** Calls a gateway part holds (0 without one). */
  liveCalls(): number;
  /**
   * A gateway part takes no new calls and lets its live ones end (GATEWAY_DRAIN_SECS); resolves
   * when they have. Everything else in the process keeps serving them meanwhile.
   */
  drain(): Promise<void>;
  /** Stops every part, gracefully, in reverse order (once); a drain not done is cut short. */
  stop(): Promise<void>;
  /**
   * A standalone worker (`npm run worker`): resolves once its version has been replaced and no
   * call is pinned to it any more (docs/versioning.md); the process then stops and exits 0.
   */
  drained?: Promise<void>;
}

export async function startPlatform(parts: Part[], options: { allInOne: boolean }): Promise<Platform> {
  const config = loadConfig();
  setLogLevel(config.LOG_LEVEL);
  // The Temporal SDK logs every worker state change and the workflow bundle at INFO. It would also
  // stop every worker on SIGINT/SIGTERM itself; signals are ours (a gateway drains first).
  Runtime.install({ logger: new DefaultLogger(config.LOG_LEVEL === 'debug' ? 'DEBUG' : 'WARN'), shutdownSignals: [] });
  const log = createLogger('platform');
  initProcessMetrics();
  applyNice(config.NICE, log);
  const stops: Array<() => Promise<void>> = [];
  // Off (and never loaded) without an OTLP endpoint; stopped last, so the final spans are sent.
  const tracing = startTracing(config);
  if (tracing) {
    stops.push(tracing.shutdown);
    log.info('tracing on', { endpoint: tracing.target.url, service: tracing.target.serviceName });
  }
  let stopping: Promise<void> | null = null;
  const stopAll = () =>
    (stopping ??= (async () => {
      for (const stop of stops.reverse()) await stop().catch((err) => log.error('stop failed', { error: err }));
    })());
  let gatewayPart: RunningGateway | null = null;
  let drained: Promise<void> | undefined;
  const urls: Record<string, string> = {};
  // The API starts first; its /healthz says ready once the worker and gateway here are too.
  const readiness = new Readiness();
  for (const part of parts.filter((p) => p !== 'api')) readiness.expect(part);
  try {
    // Whatever the platform and its children (Temporal's SQLite, PostgreSQL) create is private to
    // this user; files of older versions are tightened too.
    process.umask(0o077);
    const embeddedPostgres = options.allInOne && !config.DATABASE_URL;
    secureDataDir(config.dataDir, { traversable: embeddedPostgres && process.getuid?.() === 0 });
    const secrets = resolveSecrets(config);
    const box = new SecretBox(secrets.encryptionKey);
    // The media gateway keeps no state of its own: only the API and the worker use PostgreSQL.
    const needsDatabase = parts.includes('api') || parts.includes('worker');
    const database = needsDatabase ? await openDatabase(config, log, { embedded: options.allInOne }) : undefined;
    if (database) stops.push(database.close);
    const temporalEndpoint = await resolveTemporal(config, log, { startDevServer: options.allInOne });
    stops.push(temporalEndpoint.stop);
    const temporal: Client = await connectTemporal(temporalEndpoint.address, config.TEMPORAL_NAMESPACE);
    stops.push(() => temporal.connection.close());
    if (temporalEndpoint.uiUrl) urls['Temporal Web UI'] = temporalEndpoint.uiUrl;

    if (parts.includes('api')) {
      const generated = config.ADMIN_PASSWORD ? undefined : crypto.randomBytes(12).toString('base64url');
      if (await ensureAdmin(database!.db, config.ADMIN_EMAIL, config.ADMIN_PASSWORD ?? generated!)) {
        const shown = generated ? `with generated password: ${generated}  (shown once; change it after login)` : 'with ADMIN_PASSWORD';
        console.log(`\nCreated administrator ${config.ADMIN_EMAIL} ${shown}\n`);
      }
      const api = await startApi(
        {
          config,
          db: database!.db,
          jwtSecret: secrets.jwtSecret,
          box,
          temporal,
          notifier: logNotifier(createLogger('notifier'), config.PUBLIC_BASE_URL),
          log: createLogger('api'),
          readiness,
        },
        config.PORT,
        config.HOST,
      );
      stops.push(api.stop);
      urls.Dashboard = `http://localhost:${api.port}/`;
      urls.API = `http://localhost:${api.port}/api`;
      urls['API docs'] = `http://localhost:${api.port}/api/docs`;
    }
    if (parts.includes('worker')) {
      const worker = await startWorker({
        address: temporalEndpoint.address,
        namespace: config.TEMPORAL_NAMESPACE,
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        deps: { config, db: database!.db, box, log: createLogger('worker') },
        // `npm start`'s one worker is the install: a restart with new code makes that code current.
        setCurrent: options.allInOne ? 'always' : 'auto',
      });
      stops.push(worker.stop);
      if (parts.length === 1) drained = worker.drained;
      readiness.started('worker', worker.isRunning);
      urls['Worker task queue'] = config.TEMPORAL_TASK_QUEUE;
      // Alone, the worker has no HTTP server: its metrics and /healthz get a listener of their own.
      if (!parts.includes('api') && !parts.includes('gateway')) {
        const metrics = await startMetricsServer(config.WORKER_METRICS_PORT, config.HOST, config.METRICS_TOKEN, worker.isRunning);
        stops.push(metrics.stop);
        urls['Worker metrics'] = `http://localhost:${metrics.port}/metrics`;
      }
    }
    if (parts.includes('gateway')) {
      // The gateway publishes its load and liveness in PostgreSQL (docs/call-lifecycle.md).
      const databaseUrl = database?.url ?? config.DATABASE_URL;
      if (!databaseUrl) throw new Error('DATABASE_URL is required: the media gateway publishes its presence (load, liveness) in PostgreSQL');
      const gateway = await startGateway(
        {
          config,
          temporal,
          address: temporalEndpoint.address,
          namespace: config.TEMPORAL_NAMESPACE,
          streamSecret: secrets.jwtSecret,
          log: createLogger('gateway'),
          databaseUrl,
        },
        config.GATEWAY_PORT,
        config.HOST,
      );
      stops.push(gateway.stop);
      gatewayPart = gateway;
      readiness.started('gateway', gateway.state);
      urls['Media gateway'] = `ws://localhost:${gateway.port}`;
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  return {
    config,
    urls,
    liveCalls: () => gatewayPart?.calls.size ?? 0,
    drain: () => gatewayPart?.drain() ?? Promise.resolve(),
    stop: stopAll,
    ...(drained ? { drained } : {}),
  };
}

/** Runs parts until SIGINT/SIGTERM, printing where everything is. */
export function runUntilSignal(parts: Part[], options: { allInOne: boolean }): void {
  startPlatform(parts, options)
    .then((platform) => {
      console.log('\nVoice Agent Platform is running:');
      for (const [name, url] of Object.entries(platform.urls)) console.log(`  ${name.padEnd(18)} ${url}`);
      console.log('\nPress Ctrl-C to stop.\n');
      stopOnSignals(platform, { log: createLogger('platform'), drainSecs: platform.config.GATEWAY_DRAIN_SECS });
      // An old version's worker goes once its calls have: nothing is left that only it can run.
      void platform.drained?.then(async () => {
        console.log('\nThis worker version has been replaced and has no calls left: stopping.');
        await platform.stop();
        process.exit(0);
      });
    })
    .catch((err: Error) => {
      console.error(`\nFailed to start: ${err.message}`);
      process.exit(1);
    });
}
