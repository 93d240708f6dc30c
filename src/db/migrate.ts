/**
 * Versioned schema migrations (umzug, recorded in the SequelizeMeta table). Migrations are listed
 * here explicitly rather than globbed so the same list works under tsx, jest and compiled JS.
 */
import { Umzug, SequelizeStorage } from 'umzug';
import type { QueryInterface, Sequelize } from 'sequelize';
import * as m0001 from './migrations/0001-initial';

const MIGRATIONS = [{ name: '0001-initial', module: m0001 }];

export async function migrate(sequelize: Sequelize): Promise<string[]> {
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
