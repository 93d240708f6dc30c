/**
 * Users, API keys and password resets. Passwords are hashed with scrypt; API keys and reset tokens
 * are stored as SHA-256 digests and shown in plain text only once, when created.
 */
import crypto from 'node:crypto';
import { Op, type Transaction } from 'sequelize';
import { plain, type Database } from '../../db/database';
import type { UserRow } from '../../db/models';
import { hashPassword, randomToken, sha256Hex, verifyPassword } from '../../security/crypto';

export const API_KEY_PREFIX = 'vap_';
const RESET_TOKEN_TTL_MS = 30 * 60 * 1000; // long enough to read an email, short enough to limit exposure
// A failed scrypt verification costs as much as a real one, so unknown emails are not revealed by timing.
const DUMMY_HASH_PASSWORD = 'timing-equaliser';
let dummyHash: Promise<string> | undefined;

export interface PublicUser {
  id: string;
  email: string;
  role: 'admin' | 'member';
  created_at: Date;
}

export const publicUser = (u: UserRow): PublicUser => ({ id: u.id, email: u.email, role: u.role, created_at: u.created_at });

export async function createUser(db: Database, email: string, password: string, role: 'admin' | 'member') {
  const row = await db.models.User.create({
    id: crypto.randomUUID(),
    email: email.toLowerCase(),
    password_hash: await hashPassword(password),
    role,
  });
  return row.get({ plain: true });
}

export async function findUserByEmail(db: Database, email: string): Promise<UserRow | null> {
  return plain(await db.models.User.findOne({ where: { email: email.toLowerCase() } }));
}

export async function checkCredentials(db: Database, email: string, password: string): Promise<UserRow | null> {
  const user = await findUserByEmail(db, email);
  if (!user) {
    dummyHash ??= hashPassword(DUMMY_HASH_PASSWORD);
    await verifyPassword(password, await dummyHash);
    return null;
  }
  return (await verifyPassword(password, user.password_hash)) ? user : null;
}

/** Creates the first administrator if the users table is empty; returns whether it did. */
export async function ensureAdmin(db: Database, email: string, password: string): Promise<boolean> {
  const count = await db.models.User.count();
  if (count > 0) return false;
  await createUser(db, email, password, 'admin');
  return true;
}

export async function createApiKey(db: Database, userId: string, name: string) {
  const key = `${API_KEY_PREFIX}${randomToken(32)}`;
  const row = await db.models.ApiKey.create({
    id: crypto.randomUUID(),
    user_id: userId,
    name,
    key_prefix: key.slice(0, 10),
    key_hash: sha256Hex(key),
  });
  return { key, row: row.get({ plain: true }) };
}

export async function findUserByApiKey(db: Database, key: string): Promise<UserRow | null> {
  const apiKey = await db.models.ApiKey.findOne({ where: { key_hash: sha256Hex(key), revoked_at: null } });
  if (!apiKey) return null;
  // Last-use tracking is informative only; never block the request on it.
  apiKey.update({ last_used_at: new Date() }).catch(() => undefined);
  return plain(await db.models.User.findByPk(apiKey.get('user_id') as string));
}

export async function createResetToken(db: Database, userId: string): Promise<string> {
  const token = randomToken(32);
  await db.models.PasswordResetToken.create({
    id: crypto.randomUUID(),
    user_id: userId,
    token_hash: sha256Hex(token),
    expires_at: new Date(Date.now() + RESET_TOKEN_TTL_MS),
  });
  return token;
}

/**
 * Sets a new password and raises the user's token version, so every JWT issued before stops
 * working (a reset or change is often the answer to a leaked password or token).
 */
async function setPassword(db: Database, userId: string, newPassword: string, transaction?: Transaction): Promise<void> {
  await db.models.User.update(
    { password_hash: await hashPassword(newPassword), token_version: db.sequelize.literal('token_version + 1') as unknown as number },
    { where: { id: userId }, transaction },
  );
}

export async function changePassword(db: Database, userId: string, newPassword: string): Promise<UserRow> {
  await setPassword(db, userId, newPassword);
  return plain(await db.models.User.findByPk(userId)) as UserRow;
}

/** Consumes a reset token (single use) and sets the new password; false when invalid or expired. */
export async function consumeResetToken(db: Database, token: string, newPassword: string): Promise<boolean> {
  return db.sequelize.transaction(async (transaction) => {
    const row = await db.models.PasswordResetToken.findOne({
      where: { token_hash: sha256Hex(token), used_at: null, expires_at: { [Op.gt]: new Date() } },
      lock: true,
      transaction,
    });
    if (!row) return false;
    const userId = row.get('user_id') as string;
    // Any other outstanding reset token of the user is spent too.
    await db.models.PasswordResetToken.update({ used_at: new Date() }, { where: { user_id: userId, used_at: null }, transaction });
    await setPassword(db, userId, newPassword, transaction);
    return true;
  });
}
