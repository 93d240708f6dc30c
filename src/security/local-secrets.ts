/**
 * On a single machine the platform should start with no configuration at all, so the JWT signing
 * secret and the encryption key are generated once and kept in DATA_DIR/secrets.json (mode 0600).
 * Scaled deployments set JWT_SECRET and ENCRYPTION_KEY so every instance agrees.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';

export interface Secrets {
  jwtSecret: string;
  encryptionKey: string;
}

export function resolveSecrets(config: Config): Secrets {
  if (config.JWT_SECRET && config.ENCRYPTION_KEY) {
    return { jwtSecret: config.JWT_SECRET, encryptionKey: config.ENCRYPTION_KEY };
  }
  const file = path.join(config.dataDir, 'secrets.json');
  let stored: Partial<Secrets> = {};
  if (fs.existsSync(file)) stored = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Secrets>;
  const secrets: Secrets = {
    jwtSecret: config.JWT_SECRET ?? stored.jwtSecret ?? crypto.randomBytes(32).toString('base64url'),
    encryptionKey: config.ENCRYPTION_KEY ?? stored.encryptionKey ?? crypto.randomBytes(32).toString('base64'),
  };
  if (secrets.jwtSecret !== stored.jwtSecret || secrets.encryptionKey !== stored.encryptionKey) {
    fs.mkdirSync(config.dataDir, { recursive: true });
    fs.writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  }
  return secrets;
}
