import { z } from 'zod';
import type { ApiContext } from '../context';
import { HttpError, notFound, unauthorized } from '../errors';
import { route, uuidParam } from '../route';
import {
  checkCredentials,
  consumeResetToken,
  createApiKey,
  createResetToken,
  findUserByEmail,
  publicUser,
} from '../auth/accounts';
import { issueToken } from '../auth/authenticate';
import { clearFailures, failuresInWindow, LOGIN_MAX_FAILURES, LOGIN_WINDOW_MS, recordFailure } from '../auth/login-throttle';
import { apiTimestamp } from '../../shared/time';
import { plain, plainAll } from '../../db/database';

const LoginBody = z.object({ email: z.email(), password: z.string().min(1) });
const TokenResponse = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  expires_in: z.number().int().describe('seconds'),
});
const UserSchema = z.object({ id: z.uuid(), email: z.string(), role: z.enum(['admin', 'member']), created_at: z.string() });
const ApiKeySchema = z.object({
  id: z.uuid(),
  name: z.string(),
  prefix: z.string().describe('first characters of the key, to recognise it'),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
});
export const PASSWORD_RULE = z.string().min(8, 'must be at least 8 characters').max(256);

export const userJson = (u: Parameters<typeof publicUser>[0]) => {
  const p = publicUser(u);
  return { ...p, created_at: apiTimestamp(p.created_at) };
};

export function authRoutes(ctx: ApiContext) {
  const { db } = ctx;
  return [
    route({
      method: 'post',
      path: '/api/auth/login',
      tag: 'Authentication',
      summary: 'Log in with email and password',
      description: `Returns a JWT for the Authorization header. After ${LOGIN_MAX_FAILURES} failures from one address within ${LOGIN_WINDOW_MS / 60000} minutes, further attempts get 429.`,
      public: true,
      body: LoginBody,
      responses: { 200: { description: 'Logged in', schema: TokenResponse }, 401: { description: 'Wrong email or password' }, 429: { description: 'Too many failed attempts' } },
      async handler({ body, req }) {
        const clientKey = `ip:${req.ip}`;
        if ((await failuresInWindow(db, clientKey)) >= LOGIN_MAX_FAILURES) {
          throw new HttpError(429, 'Too many failed login attempts; try again later', {
            'Retry-After': String(LOGIN_WINDOW_MS / 1000),
          });
        }
        const user = await checkCredentials(db, body.email, body.password);
        if (!user) {
          await recordFailure(db, clientKey);
          throw unauthorized('Wrong email or password');
        }
        await clearFailures(db, clientKey);
        const expires = ctx.config.JWT_EXPIRES_IN_SECS;
        return {
          status: 200,
          body: { access_token: issueToken(ctx.jwtSecret, expires, user), token_type: 'bearer', expires_in: expires },
        };
      },
    }),
    route({
      method: 'get',
      path: '/api/auth/me',
      tag: 'Authentication',
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
      tag: 'Authentication',
      summary: 'Request a password reset token',
      description:
        'Always answers 202, whether or not the email is known, so the endpoint cannot be used to discover accounts. The single-use token (valid 30 minutes) is delivered through the configured notifier; in development it is written to the server log.',
      public: true,
      body: z.object({ email: z.email() }),
      responses: { 202: { description: 'Accepted', schema: z.object({ detail: z.string() }) } },
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
      tag: 'Authentication',
      summary: 'Set a new password with a reset token',
      public: true,
      body: z.object({ token: z.string().min(1), new_password: PASSWORD_RULE }),
      responses: { 200: { description: 'Password changed', schema: z.object({ detail: z.string() }) }, 400: { description: 'Invalid, used or expired token' } },
      async handler({ body }) {
        if (!(await consumeResetToken(db, body.token, body.new_password))) {
          throw new HttpError(400, 'Invalid, used or expired reset token');
        }
        return { status: 200, body: { detail: 'Password changed' } };
      },
    }),
    route({
      method: 'get',
      path: '/api/auth/api-keys',
      tag: 'Authentication',
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
      tag: 'Authentication',
      summary: 'Create an API key for server-to-server use',
      description: 'The key (prefix `vap_`) is returned in plain text only in this response; only its hash is stored.',
      body: z.object({ name: z.string().trim().min(1).max(100) }),
      responses: { 201: { description: 'Created', schema: ApiKeySchema.extend({ key: z.string() }) } },
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
      tag: 'Authentication',
      summary: 'Revoke an API key',
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
