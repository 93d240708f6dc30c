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
import * as m0005 from './migrations/0005-telephony-provider-settings';
import * as m0006 from './migrations/0006-gateways';
import * as m0007 from './migrations/0007-call-analysis';
import * as m0008 from './migrations/0008-agent-tests';
import * as m0009 from './migrations/0009-transfer-destinations';
import * as m0011 from './migrations/0011-publishable-keys';
import * as m0012 from './migrations/0012-voicemail';
import * as m0013 from './migrations/0013-call-list-test-calls';
import * as m0014 from './migrations/0014-call-verdict-fields';
import * as m0015 from './migrations/0015-gateway-room';
import * as m0016 from './migrations/0016-call-end-reason-index';
import * as m0017 from './migrations/0017-call-turn-journal';
import * as m0018 from './migrations/0018-gateway-handoff-lag';
import * as m0019 from './migrations/0019-campaigns';
import * as m0021 from './migrations/0021-mcp-servers';
import * as m0022 from './migrations/0022-transfer-summary';
import * as m0023 from './migrations/0023-knowledge-bases';
import * as m0024 from './migrations/0024-call-trace-id';
import * as m0025 from './migrations/0025-knowledge-embeddings';
import * as m0026 from './migrations/0026-campaign-notifications';

const MIGRATIONS = [
  { name: '0001-initial', module: m0001 },
  { name: '0002-security', module: m0002 },
  { name: '0004-call-channel', module: m0004 },
  { name: '0005-telephony-provider-settings', module: m0005 },
  { name: '0006-gateways', module: m0006 },
  { name: '0007-call-analysis', module: m0007 },
  { name: '0008-agent-tests', module: m0008 },
  { name: '0009-transfer-destinations', module: m0009 },
  { name: '0011-publishable-keys', module: m0011 },
  { name: '0012-voicemail', module: m0012 },
  { name: '0013-call-list-test-calls', module: m0013 },
  { name: '0014-call-verdict-fields', module: m0014 },
  { name: '0015-gateway-room', module: m0015 },
  { name: '0016-call-end-reason-index', module: m0016 },
  { name: '0017-call-turn-journal', module: m0017 },
  { name: '0018-gateway-handoff-lag', module: m0018 },
  { name: '0019-campaigns', module: m0019 },
  { name: '0021-mcp-servers', module: m0021 },
  { name: '0022-transfer-summary', module: m0022 },
  { name: '0023-knowledge-bases', module: m0023 },
  { name: '0024-call-trace-id', module: m0024 },
  { name: '0025-knowledge-embeddings', module: m0025 },
  { name: '0026-campaign-notifications', module: m0026 },
];

// Any fixed number: several processes starting at once (API, workers) take turns migrating.
const MIGRATION_LOCK_KEY = 7_412_001;

/** Applies the pending migrations, or those up to and including `to` (a name of MIGRATIONS). */
export async function migrate(sequelize: Sequelize, options: { to?: string } = {}): Promise<string[]> {
  // A session-level advisory lock needs one connection of its own, outside the pool.
  const { host, port, database, username, password } = sequelize.config;
  const lock = new Client({ host, port: Number(port), database, user: username, password: password ?? undefined });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    return await runMigrations(sequelize, options.to);
  } finally {
    await lock.end().catch(() => undefined); // ending the session releases the lock
  }
}

async function runMigrations(sequelize: Sequelize, to?: string): Promise<string[]> {
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
  const applied = await umzug.up(to ? { to } : {});
  return applied.map((m) => m.name);
}
