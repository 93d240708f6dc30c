/**
 * Activities are built by a factory that receives their dependencies, so the worker, tests and
 * the gateway can each wire them to their own database and providers.
 */
import type { Config } from '../src/config';
import type { Database } from '../src/db/database';
import type { SecretBox } from '../src/security/crypto';
import type { Logger } from '../src/shared/logger';

export interface ActivityDeps {
  config: Config;
  db: Database;
  box: SecretBox;
  log: Logger;
}

export function createActivities(deps: ActivityDeps) {
  return {
    async ping(): Promise<string> {
      await deps.db.sequelize.authenticate();
      return 'pong';
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
