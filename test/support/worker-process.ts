/**
 * A call worker in its own OS process, so tests can kill it (SIGKILL) in the middle of a call.
 * Configured entirely by environment, like `npm run worker`, plus a pre-built workflow bundle.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../../src/config';
import { connectDatabase } from '../../src/db/database';
import { applyNice } from '../../src/runtime/priority';
import { SecretBox } from '../../src/security/crypto';
import { createLogger } from '../../src/shared/logger';
import { startWorker } from '../../src/worker/worker';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const config = loadConfig();
  applyNice(config.NICE, createLogger('worker'));
  const db = connectDatabase(config.DATABASE_URL!, { poolMax: 3 });
  await startWorker({
    address: config.TEMPORAL_ADDRESS!,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    deps: { config, db, box: new SecretBox(config.ENCRYPTION_KEY!), log: createLogger('worker') },
    workflowBundle: { codePath: process.env.VAP_TEST_WORKFLOW_BUNDLE! },
  });
  process.stdout.write('worker ready\n');
}

main().catch((err) => {
  process.stderr.write(`worker failed: ${(err as Error).stack}\n`);
  process.exit(1);
});
