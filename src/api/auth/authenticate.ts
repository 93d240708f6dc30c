/**
 * Bearer authentication for /api: a JWT from login (verified by express-jwt) or an API key,
 * recognised by its `vap_` prefix and looked up by hash. A publishable key (`pk_`) is looked up
 * too but grants no user: only routes that declare `publishableKey` accept it (route.ts). The role always comes from the users
 * table, never from the token, and a JWT carries the user's token version (`tv`): a password
 * change or reset raises it, and every older token is refused.
 */
import type { NextFunction, Request, Response } from 'express';
import { expressjwt } from 'express-jwt';
import jwt from 'jsonwebtoken';
import type { Database } from '../../db/database';
import { unauthorized } from '../errors';
import type { AuthContext } from '../route';
import { API_KEY_PREFIX, findUserByApiKey } from './accounts';
import { findPublishableKey, PUBLISHABLE_KEY_PREFIX, type PublishableKeyContext } from './publishable-keys';
import { plain } from '../../db/database';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface JwtClaims {
  sub: string;
  email: string;
  role: 'admin' | 'member';
  /** Token version; tokens from before token versions count as 0. */
  tv?: number;
}

export function issueToken(secret: string, expiresInSecs: number, user: { id: string; email: string; role: string; token_version: number }) {
  return jwt.sign({ email: user.email, role: user.role, tv: user.token_version }, secret, {
    algorithm: 'HS256',
    subject: user.id,
    expiresIn: expiresInSecs,
  });
}

export function authenticate(db: Database, jwtSecret: string) {
  const verifyJwt = expressjwt({ secret: jwtSecret, algorithms: ['HS256'], requestProperty: 'jwtClaims' });
  return async (req: Request, res: Response, next: NextFunction) => {
    const header = req.headers.authorization ?? '';
    const [scheme, token] = header.split(' ');
    if (!token || scheme?.toLowerCase() !== 'bearer') return next(unauthorized('Missing bearer token'));
    const request = req as Request & { authContext?: AuthContext; jwtClaims?: JwtClaims; publishableKey?: PublishableKeyContext };
    if (token.startsWith(PUBLISHABLE_KEY_PREFIX)) {
      try {
        const key = await findPublishableKey(db, token);
        if (!key) return next(unauthorized('Invalid or revoked publishable key'));
        request.publishableKey = key;
        return next();
      } catch (err) {
        return next(err);
      }
    }
    if (token.startsWith(API_KEY_PREFIX)) {
      try {
        const user = await findUserByApiKey(db, token);
        if (!user) return next(unauthorized('Invalid or revoked API key'));
        request.authContext = { userId: user.id, email: user.email, role: user.role, via: 'api_key' };
        return next();
      } catch (err) {
        return next(err);
      }
    }
    verifyJwt(req, res, async (err?: unknown) => {
      if (err) return next(err);
      const claims = request.jwtClaims!;
      try {
        // A deleted user's tokens stop working at once, not at expiry; so do those from before a password change.
        const user = typeof claims.sub === 'string' && UUID.test(claims.sub) ? plain(await db.models.User.findByPk(claims.sub)) : null;
        if (!user) return next(unauthorized('User no longer exists'));
        if ((claims.tv ?? 0) !== user.token_version) return next(unauthorized('Token revoked: the password was changed; log in again'));
        request.authContext = { userId: user.id, email: user.email, role: user.role, via: 'jwt' };
        next();
      } catch (dbErr) {
        next(dbErr);
      }
    });
  };
}
