/**
 * Starts what every integration test talks to: a real PostgreSQL and a real Temporal dev server
 * (the same launcher `npm start` uses, with no internet needed), and bundles the workflow code once.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowBundleOptions } from '../../src/worker/workflow-bundle';
import { connectDatabase } from '../../src/db/database';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres';
import { migrate } from '../../src/db/migrate';
import { createLogger } from '../../src/shared/logger';
import { ensureTemporalCli } from '../../src/temporal/cli';
import { getFreePort, startDevServer } from '../../src/temporal/dev-server';
import { adminQuery, canConnect, DEFAULT_TEST_PG, withDatabase } from './postgres';

const log = createLogger('test-setup');

export interface TestServicesOptions {
  /**
   * Temporal's state in a SQLite file, as `npm start` keeps it (the benchmark: its figures are what
   * a single-machine install gets). Tests keep it in memory.
   */
  temporalOnDisk?: boolean;
}

export default async function globalSetup(): Promise<void> {
  // Each project of jest.config.js that needs the services names this set-up; a run of several
  // (the timed tier: its integration files and the browser tests) starts them once.
  if ((globalThis as Record<string, unknown>).__VAP_TEST__) return;
  await startTestServices();
}

export async function startTestServices(options: TestServicesOptions = {}): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-test-'));
  const state: Record<string, unknown> = { tmp };
  (globalThis as Record<string, unknown>).__VAP_TEST__ = state;

  let pgUrl = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? DEFAULT_TEST_PG;
  if (!(await canConnect(pgUrl))) {
    log.info(`no PostgreSQL at ${new URL(pgUrl).host}; starting an embedded one`);
    const embedded = await startEmbeddedPostgres(tmp, await getFreePort(), crypto.randomBytes(18).toString('base64url'), log);
    state.stopPostgres = embedded.stop;
    pgUrl = embedded.url;
  }
  const template = `vap_test_${process.pid}`;
  await adminQuery(pgUrl, `DROP DATABASE IF EXISTS "${template}"`);
  await adminQuery(pgUrl, `CREATE DATABASE "${template}"`);
  const db = connectDatabase(withDatabase(pgUrl, template), { poolMax: 1 });
  await migrate(db.sequelize);
  await db.close();
  process.env.VAP_TEST_PG_URL = pgUrl;
  process.env.VAP_TEST_TEMPLATE_DB = template;

  const cliPath = await ensureTemporalCli(process.env.TEMPORAL_CLI_PATH, log);
  const port = await getFreePort();
  const server = await startDevServer({
    cliPath,
    port,
    headless: true,
    ...(options.temporalOnDisk ? { dbFile: path.join(tmp, 'temporal.db') } : {}),
    // Small histories in tests exercise continue-as-new quickly.
    extraArgs: ['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=400'],
  });
  state.stopTemporal = server.stop;
  process.env.VAP_TEST_TEMPORAL_ADDRESS = server.address;
  process.env.VAP_TEST_TEMPORAL_CLI = cliPath;

  const { code } = await bundleWorkflowCode({
    ...workflowBundleOptions(),
    logger: { trace() {}, debug() {}, info() {}, warn: (m: string) => log.warn(m), error: (m: string) => log.error(m) } as never,
  });
  const bundlePath = path.join(tmp, 'workflow-bundle.js');
  fs.writeFileSync(bundlePath, code);
  process.env.VAP_TEST_WORKFLOW_BUNDLE = bundlePath;
}
