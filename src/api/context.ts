import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Database } from '../db/database';
import type { SecretBox } from '../security/crypto';
import type { Logger } from '../shared/logger';
import type { Readiness } from '../runtime/readiness';

/** Delivers password-reset tokens; the default logs them (development), deployments plug in mail. */
export interface Notifier {
  sendPasswordReset(email: string, token: string): Promise<void>;
}

/** Everything the API's routes depend on, passed in explicitly (no module-level state). */
export interface ApiContext {
  config: Config;
  db: Database;
  jwtSecret: string;
  box: SecretBox;
  temporal: Client;
  notifier: Notifier;
  log: Logger;
  /** The other parts of this process (worker, gateway) that /healthz waits for; none by default. */
  readiness?: Readiness;
}
