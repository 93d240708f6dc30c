/**
 * On a single machine the platform should start with no configuration at all, so the secrets it
 * needs are generated once and kept in DATA_DIR/secrets.json (mode 0600): the JWT signing secret,
 * the encryption key and the password of the embedded PostgreSQL. Scaled deployments set
 * JWT_SECRET and ENCRYPTION_KEY so every instance agrees; values given in the environment are
 * never written to the file.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import { DIR_MODE, FILE_MODE } from './data-files';

export interface Secrets {
  jwtSecret: string;
  encryptionKey: string;
}

interface StoredSecrets extends Partial<Secrets> {
  postgresPassword?: string;
}

const secretsFile = (config: Config) => path.join(config.dataDir, 'secrets.json');

function readStored(config: Config): StoredSecrets {
  const file = secretsFile(config);
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as StoredSecrets) : {};
}

/** Adds generated values to the file: written 0600 under another name, then renamed into place. */
function store(config: Config, values: StoredSecrets): void {
  // Created private if missing; an existing DATA_DIR keeps the mode start-up gave it (0711 when
  // the embedded PostgreSQL runs as its own user and must reach DATA_DIR/postgres).
  fs.mkdirSync(config.dataDir, { recursive: true, mode: DIR_MODE });
  const file = secretsFile(config);
  const next = { ...readStored(config), ...values };
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(next, null, 2), { mode: FILE_MODE });
  fs.chmodSync(tmp, FILE_MODE);
  fs.renameSync(tmp, file);
}

export function resolveSecrets(config: Config): Secrets {
  if (config.JWT_SECRET && config.ENCRYPTION_KEY) {
    return { jwtSecret: config.JWT_SECRET, encryptionKey: config.ENCRYPTION_KEY };
  }
  const stored = readStored(config);
  const generated: StoredSecrets = {};
  if (!config.JWT_SECRET && !stored.jwtSecret) generated.jwtSecret = crypto.randomBytes(32).toString('base64url');
  if (!config.ENCRYPTION_KEY && !stored.encryptionKey) generated.encryptionKey = crypto.randomBytes(32).toString('base64');
  if (Object.keys(generated).length) store(config, generated);
  return {
    jwtSecret: config.JWT_SECRET ?? stored.jwtSecret ?? generated.jwtSecret!,
    encryptionKey: config.ENCRYPTION_KEY ?? stored.encryptionKey ?? generated.encryptionKey!,
  };
}

/** The embedded PostgreSQL's superuser password: generated on first use and kept with the other secrets. */
export function embeddedPostgresPassword(config: Config): string {
  const stored = readStored(config).postgresPassword;
  if (stored) return stored;
  const password = crypto.randomBytes(24).toString('base64url');
  store(config, { postgresPassword: password });
  return password;
}
