import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Config } from '../config';
import type { Logger } from '../shared/logger';
import { ensureTemporalCli } from '../temporal/cli';
import { startDevServer } from '../temporal/dev-server';
import { privateFile } from '../security/data-files';
import { applyNice, DEV_SERVER_NICE } from './priority';

const DEFAULT_PORT = 7233;

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

export interface TemporalEndpoint {
  address: string;
  uiUrl?: string;
  stop(): Promise<void>;
}

/**
 * TEMPORAL_ADDRESS when set (an existing cluster: start nothing); otherwise a Temporal dev server
 * with its state in DATA_DIR/temporal.db, reused if one already listens on 7233.
 */
export async function resolveTemporal(config: Config, log: Logger, options: { startDevServer: boolean }): Promise<TemporalEndpoint> {
  const none = async () => undefined;
  if (config.TEMPORAL_ADDRESS) return { address: config.TEMPORAL_ADDRESS, stop: none };
  const address = `127.0.0.1:${DEFAULT_PORT}`;
  if (!options.startDevServer) return { address, stop: none };
  if (await listening(DEFAULT_PORT)) {
    log.info('using the Temporal server already listening', { address });
    return { address, uiUrl: `http://localhost:${config.TEMPORAL_UI_PORT}`, stop: none };
  }
  const cliPath = await ensureTemporalCli(config.TEMPORAL_CLI_PATH, log);
  fs.mkdirSync(config.dataDir, { recursive: true });
  log.info('starting the Temporal dev server', { cliPath });
  const dbFile = path.join(config.dataDir, 'temporal.db');
  const server = await startDevServer({
    cliPath,
    port: DEFAULT_PORT,
    uiPort: config.TEMPORAL_UI_PORT,
    dbFile,
    namespace: config.TEMPORAL_NAMESPACE,
    ownProcessGroup: true,
  });
  // Created under the platform's umask (0077); tightened here too in case it already existed.
  privateFile(dbFile);
  // It shares the cores with the media gateway in this process: the audio goes first.
  if (server.process.pid) applyNice(DEV_SERVER_NICE, log, server.process.pid, 'Temporal dev server');
  return { address: server.address, uiUrl: `http://localhost:${config.TEMPORAL_UI_PORT}`, stop: server.stop };
}
