import { z } from 'zod';
import type { ApiContext } from '../context';
import { HttpError, notFound, unauthorized } from '../errors';
import { route, uuidParam } from '../route';
import {
  changePassword,
  checkCredentials,
  consumeResetToken,
  createApiKey,
  createResetToken,
  findUserByEmail,
  publicUser,
} from '../auth/accounts';
import { issueToken } from '../auth/authenticate';
import { clearAttempts, countAttempt, LOGIN_MAX_ATTEMPTS, LOGIN_WINDOW_SECS, loginKeys } from '../auth/login-throttle';
import { verifyPassword } from '../../security/crypto';
import { apiTimestamp } from '../../shared/time';
import { plain, plainAll } from '../../db/database';
import { Timestamp, UserRole } from '../schemas/common';

// RFC 5321 caps an address at 254 characters; the cap also keeps the unique index happy.
export const EmailSchema = z.email().max(254);
const LoginBody = z.object({ email: EmailSchema, password: z.string().min(1).max(256) });
const TokenResponse = z
  .object({
    access_token: z.string(),
    token_type: z.literal('bearer'),
    expires_in: z.number().int().describe('seconds'),
  })
  .meta({ id: 'Token' });
const UserSchema = z.object({ id: z.uuid(), email: z.string(), role: UserRole, created_at: Timestamp }).meta({ id: 'User' });
const ApiKeySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z.string().describe('first characters of the key, to recognise it'),
    created_at: Timestamp,
    last_used_at: Timestamp.nullable(),
    key: z.string().optional().describe('vap_…: the key itself, only in the answer to POST /api/auth/api-keys'),
  })
  .meta({ id: 'ApiKey' });
const Message = z.object({ detail: z.string() }).meta({ id: 'Message', description: 'a confirmation in words' });
export const PASSWORD_RULE = z.string().min(8, 'must be at least 8 characters').max(256);

export const userJson = (u: Parameters<typeof publicUser>[0]) => {
  const p = publicUser(u);
  return { ...p, created_at: apiTimestamp(p.created_at) };
};

export function authRoutes(ctx: ApiContext) {
  const { db } = ctx;
  const tooMany = (retryAfterSecs: number) =>
    new HttpError(429, 'Too many login attempts; try again later', { 'Retry-After': String(retryAfterSecs) });
  const tokenResponse = (user: Parameters<typeof issueToken>[2]) => {
    const expires = ctx.config.JWT_EXPIRES_IN_SECS;
    return { access_token: issueToken(ctx.jwtSecret, expires, user), token_type: 'bearer' as const, expires_in: expires };
  };
  return [
    route({
      method: 'post',
      path: '/api/auth/login',
      operationId: 'login',
      tag: 'Authentication',
      summary: 'Log in with email and password',
      description: `Returns a JWT for the Authorization header. Every attempt is counted before the password is checked: more than ${LOGIN_MAX_ATTEMPTS} attempts from one address, or for one account, within ${LOGIN_WINDOW_SECS / 60} minutes get 429 with Retry-After until the window ends; a successful login clears both counts. The address is the connection's, or X-Forwarded-For from a proxy trusted by TRUST_PROXY.`,
      public: true,
      body: LoginBody,
      responses: { 200: { description: 'Logged in', schema: TokenResponse }, 401: { description: 'Wrong email or password' }, 429: { description: 'Too many attempts' } },
      async handler({ body, req }) {
        const keys = loginKeys(req.ip, body.email);
        const verdict = await countAttempt(db, keys);
        if (!verdict.allowed) throw tooMany(verdict.retryAfterSecs);
        const user = await checkCredentials(db, body.email, body.password);
        if (!user) throw unauthorized('Wrong email or password');
        await clearAttempts(db, keys);
        return { status: 200, body: tokenResponse(user) };
      },
    }),
    route({
      method: 'get',
      path: '/api/auth/me',
      operationId: 'getCurrentUser',
      tag: 'Authentication',
      access: 'member',
      summary: 'The authenticated user',
      responses: { 200: { description: 'The caller', schema: UserSchema } },
      async handler({ auth }) {
        const user = plain(await db.models.User.findByPk(auth.userId));
        if (!user) throw unauthorized('User no longer exists');
        return { status: 200, body: userJson(user) };
      },
    }),
    route({
      method: 'post',
      path: '/api/auth/password-reset',
      operationId: 'requestPasswordReset',
      tag: 'Authentication',
      summary: 'Request a password reset token',
      description:
        'Always answers 202, whether or not the email is known, so the endpoint cannot be used to discover accounts. The single-use token (valid 30 minutes) is delivered through the configured notifier; in development it is written to the server log.',
      public: true,
      body: z.object({ email: EmailSchema }),
      responses: { 202: { description: 'Accepted', schema: Message } },
      async handler({ body }) {
        const user = await findUserByEmail(db, body.email);
        if (user) {
          const token = await createResetToken(db, user.id);
          await ctx.notifier.sendPasswordReset(user.email, token);
        }
        return { status: 202, body: { detail: 'If the account exists, a reset token has been sent' } };
      },
    }),
    route({
      method: 'post',
      path: '/api/auth/password-reset/confirm',
      operationId: 'confirmPasswordReset',
      tag: 'Authentication',
      summary: 'Set a new password with a reset token',
      public: true,
      description: 'Every token issued to the user before the reset stops working (API keys stay valid; revoke them separately).',
      body: z.object({ token: z.string().min(1).max(200), new_password: PASSWORD_RULE }),
      responses: { 200: { description: 'Password changed', schema: Message }, 400: { description: 'Invalid, used or expired token' } },
      async handler({ body }) {
        if (!(await consumeResetToken(db, body.token, body.new_password))) {
          throw new HttpError(400, 'Invalid, used or expired reset token');
        }
        return { status: 200, body: { detail: 'Password changed' } };
      },
    }),
    route({
      method: 'post',
      path: '/api/auth/password',
      operationId: 'changePassword',
      tag: 'Authentication',
      access: 'member',
      summary: "Change the caller's password",
      description: `Needs the current password (counted like a login attempt for the account). Every JWT issued before stops working; the answer carries a new one. API keys stay valid.`,
      body: z.object({ current_password: z.string().min(1).max(256), new_password: PASSWORD_RULE }),
      responses: {
        200: { description: 'Password changed; a new token', schema: TokenResponse },
        401: { description: 'Wrong current password' },
        429: { description: 'Too many attempts' },
      },
      async handler({ body, auth, req }) {
        const user = plain(await db.models.User.findByPk(auth.userId));
        if (!user) throw unauthorized('User no longer exists');
        const keys = loginKeys(req.ip, user.email);
        const verdict = await countAttempt(db, keys);
        if (!verdict.allowed) throw tooMany(verdict.retryAfterSecs);
        if (!(await verifyPassword(body.current_password, user.password_hash))) throw unauthorized('Wrong current password');
        await clearAttempts(db, keys);
        return { status: 200, body: tokenResponse(await changePassword(db, user.id, body.new_password)) };
      },
    }),
    route({
      method: 'get',
      path: '/api/auth/api-keys',
      operationId: 'listApiKeys',
      tag: 'Authentication',
      access: 'member',
      summary: "List the caller's API keys (never the secret)",
      responses: { 200: { description: 'Active keys', schema: z.array(ApiKeySchema) } },
      async handler({ auth }) {
        const rows = plainAll(
          await db.models.ApiKey.findAll({ where: { user_id: auth.userId, revoked_at: null }, order: [['created_at', 'ASC']] }),
        );
        return {
          status: 200,
          body: rows.map((r) => ({
            id: r.id,
            name: r.name,
            prefix: r.key_prefix,
            created_at: apiTimestamp(r.created_at),
            last_used_at: apiTimestamp(r.last_used_at),
          })),
        };
      },
    }),
    route({
      method: 'post',
      path: '/api/auth/api-keys',
      operationId: 'createApiKey',
      tag: 'Authentication',
      access: 'member',
      summary: 'Create an API key for server-to-server use',
      description: 'The key (prefix `vap_`) is returned in plain text only in this response; only its hash is stored.',
      body: z.object({ name: z.string().trim().min(1).max(100) }),
      responses: { 201: { description: 'Created', schema: ApiKeySchema } },
      async handler({ body, auth }) {
        const { key, row } = await createApiKey(db, auth.userId, body.name);
        return {
          status: 201,
          body: { id: row.id, name: row.name, prefix: row.key_prefix, key, created_at: apiTimestamp(row.created_at), last_used_at: null },
        };
      },
    }),
    route({
      method: 'delete',
      path: '/api/auth/api-keys/{key_id}',
      operationId: 'deleteApiKey',
      tag: 'Authentication',
      access: 'member',
      summary: 'Revoke an API key',
      description: "Members revoke their own keys; an administrator may revoke anyone's.",
      params: uuidParam('key_id'),
      responses: { 204: { description: 'Revoked' }, 404: { description: 'No such key' } },
      async handler({ params, auth }) {
        const where = auth.role === 'admin' ? { id: params.key_id as string } : { id: params.key_id as string, user_id: auth.userId };
        const [count] = await db.models.ApiKey.update({ revoked_at: new Date() }, { where: { ...where, revoked_at: null } });
        if (!count) throw notFound('API key');
        return { status: 204 };
      },
    }),
  ];
}

export { UserSchema };
