import { z } from 'zod';
import { UniqueConstraintError } from 'sequelize';
import type { ApiContext } from '../context';
import { conflict, HttpError, notFound } from '../errors';
import { route, uuidParam } from '../route';
import { createUser } from '../auth/accounts';
import { plainAll } from '../../db/database';
import { UserRole } from '../schemas/common';
import { EmailSchema, PASSWORD_RULE, UserSchema, userJson } from './auth';

export function userRoutes(ctx: ApiContext) {
  const { db } = ctx;
  return [
    route({
      method: 'get',
      path: '/api/users',
      operationId: 'listUsers',
      tag: 'Users',
      summary: 'List users (admin)',
      responses: { 200: { description: 'All users', schema: z.array(UserSchema) } },
      async handler() {
        const rows = plainAll(await db.models.User.findAll({ order: [['created_at', 'ASC']] }));
        return { status: 200, body: rows.map(userJson) };
      },
    }),
    route({
      method: 'post',
      path: '/api/users',
      operationId: 'createUser',
      tag: 'Users',
      summary: 'Create a user (admin)',
      body: z.object({ email: EmailSchema, password: PASSWORD_RULE, role: UserRole.default('member') }),
      responses: { 201: { description: 'Created', schema: UserSchema }, 409: { description: 'Email already registered' } },
      async handler({ body }) {
        try {
          return { status: 201, body: userJson(await createUser(db, body.email, body.password, body.role)) };
        } catch (err) {
          if (err instanceof UniqueConstraintError) throw conflict(`A user with email ${body.email} already exists`);
          throw err;
        }
      },
    }),
    route({
      method: 'delete',
      path: '/api/users/{user_id}',
      operationId: 'deleteUser',
      tag: 'Users',
      summary: 'Delete a user (admin); their API keys stop working',
      params: uuidParam('user_id'),
      responses: { 204: { description: 'Deleted' }, 404: { description: 'No such user' }, 409: { description: 'Cannot delete yourself' } },
      async handler({ params, auth }) {
        if (params.user_id === auth.userId) throw new HttpError(409, 'You cannot delete your own account');
        const count = await db.models.User.destroy({ where: { id: params.user_id as string } });
        if (!count) throw notFound('User');
        return { status: 204 };
      },
    }),
  ];
}
