/**
 * A call worker in its own OS process, so tests can kill it (SIGKILL) in the middle of a call, or
 * stop it as a deploy does (SIGTERM: stop-signals.ts, as `npm run worker`). Configured entirely by
 * environment, like `npm run worker`, plus a pre-built workflow bundle.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../../src/config';
import { connectDatabase } from '../../src/db/database';
import { applyNice } from '../../src/runtime/priority';
import { stopOnSignals } from '../../src/runtime/stop-signals';
import { SecretBox } from '../../src/security/crypto';
import { createLogger } from '../../src/shared/logger';
import { startWorker } from '../../src/worker/worker';
import { startTracing } from '../../src/observability/tracing/tracing';

async function main(): Promise<void> {
  // Signals are the platform's, as in src/runtime/platform.ts.
  Runtime.install({ logger: new DefaultLogger('ERROR'), shutdownSignals: [] });
  const config = loadConfig();
  const log = createLogger('worker');
  applyNice(config.NICE, log);
  // As `npm run worker`: traced when the environment names an OTLP endpoint (bench:voice with tracing on).
  const tracing = startTracing(config);
  const db = connectDatabase(config.DATABASE_URL!, { poolMax: 3 });
  const worker = await startWorker({
    address: config.TEMPORAL_ADDRESS!,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    deps: { config, db, box: new SecretBox(config.ENCRYPTION_KEY!), log },
    workflowBundle: { codePath: process.env.VAP_TEST_WORKFLOW_BUNDLE! },
  });
  stopOnSignals(
    {
      liveCalls: () => 0,
      drain: async () => undefined,
      stop: async () => {
        await worker.stop();
        await db.close();
        await tracing?.shutdown();
      },
    },
    { log, drainSecs: 0 },
  );
  process.stdout.write('worker ready\n');
}

main().catch((err) => {
  process.stderr.write(`worker failed: ${(err as Error).stack}\n`);
  process.exit(1);
});
