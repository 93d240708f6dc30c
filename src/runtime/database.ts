import fs from 'node:fs';
import type { Config } from '../config';
import { connectDatabase, type Database } from '../db/database';
import { startEmbeddedPostgres } from '../db/embedded-postgres';
import { migrate } from '../db/migrate';
import { embeddedPostgresPassword } from '../security/local-secrets';
import type { Logger } from '../shared/logger';

export interface OpenedDatabase {
  db: Database;
  url: string;
  /** Closes the pool and, when embedded, stops PostgreSQL. */
  close(): Promise<void>;
}

/** DATABASE_URL when set, else an embedded PostgreSQL under DATA_DIR; migrations run either way. */
export async function openDatabase(config: Config, log: Logger, options: { embedded: boolean }): Promise<OpenedDatabase> {
  let url = config.DATABASE_URL;
  let stopEmbedded: () => Promise<void> = async () => undefined;
  if (!url) {
    if (!options.embedded) throw new Error('DATABASE_URL is required when running this process on its own');
    fs.mkdirSync(config.dataDir, { recursive: true });
    const embedded = await startEmbeddedPostgres(config.dataDir, config.EMBEDDED_PG_PORT, embeddedPostgresPassword(config), log);
    url = embedded.url;
    stopEmbedded = embedded.stop;
  }
  const db = connectDatabase(url);
  const applied = await migrate(db.sequelize);
  if (applied.length) log.info('database migrated', { applied });
  return {
    db,
    url,
    close: async () => {
      await db.close();
      await stopEmbedded();
    },
  };
}
