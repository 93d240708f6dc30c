/**
 * Versioned schema migrations (umzug, recorded in the SequelizeMeta table). Migrations are listed
 * here explicitly rather than globbed so the same list works under tsx, jest and compiled JS.
 */
import { Umzug, SequelizeStorage } from 'umzug';
import { Client } from 'pg';
import type { QueryInterface, Sequelize } from 'sequelize';
import * as m0001 from './migrations/0001-initial';
import * as m0002 from './migrations/0002-security';
import * as m0004 from './migrations/0004-call-channel';
import * as m0008 from './migrations/0008-agent-tests';

const MIGRATIONS = [
  { name: '0001-initial', module: m0001 },
  { name: '0002-security', module: m0002 },
  { name: '0004-call-channel', module: m0004 },
  { name: '0008-agent-tests', module: m0008 },
];

// Any fixed number: several processes starting at once (API, workers) take turns migrating.
const MIGRATION_LOCK_KEY = 7_412_001;

export async function migrate(sequelize: Sequelize): Promise<string[]> {
  // A session-level advisory lock needs one connection of its own, outside the pool.
  const { host, port, database, username, password } = sequelize.config;
  const lock = new Client({ host, port: Number(port), database, user: username, password: password ?? undefined });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    return await runMigrations(sequelize);
  } finally {
    await lock.end().catch(() => undefined); // ending the session releases the lock
  }
}

async function runMigrations(sequelize: Sequelize): Promise<string[]> {
  const umzug = new Umzug<QueryInterface>({
    migrations: MIGRATIONS.map(({ name, module }) => ({
      name,
      up: ({ context }) => module.up({ context }),
      down: ({ context }) => module.down({ context }),
    })),
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize }),
    logger: undefined,
  });
  const applied = await umzug.up();
  return applied.map((m) => m.name);
}
