/**
 * Bearer authentication for /api: a JWT from login (verified by express-jwt) or an API key,
 * recognised by its `vap_` prefix and looked up by hash.
 */
import type { NextFunction, Request, Response } from 'express';
import { expressjwt } from 'express-jwt';
import jwt from 'jsonwebtoken';
import type { Database } from '../../db/database';
import { unauthorized } from '../errors';
import type { AuthContext } from '../route';
import { API_KEY_PREFIX, findUserByApiKey } from './accounts';

interface JwtClaims {
  sub: string;
  email: string;
  role: 'admin' | 'member';
}

export function issueToken(secret: string, expiresInSecs: number, user: { id: string; email: string; role: string }) {
  return jwt.sign({ email: user.email, role: user.role }, secret, {
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
    const request = req as Request & { authContext?: AuthContext; jwtClaims?: JwtClaims };
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
      // A deleted user's tokens stop working at once, not at expiry.
      const exists = await db.models.User.count({ where: { id: claims.sub } }).catch(() => 0);
      if (!exists) return next(unauthorized('User no longer exists'));
      request.authContext = { userId: claims.sub, email: claims.email, role: claims.role, via: 'jwt' };
      next();
    });
  };
}
