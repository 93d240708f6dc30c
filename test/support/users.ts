/** Users other than the harness's administrator, created through the API as an admin would. */
import crypto from 'node:crypto';
import type { Harness } from './harness';

export interface Session {
  id: string;
  email: string;
  password: string;
  token: string;
}

export async function createSession(h: Harness, role: 'admin' | 'member' = 'member', email = `${role}-${crypto.randomBytes(4).toString('hex')}@example.com`): Promise<Session> {
  const password = `pw-${crypto.randomBytes(8).toString('hex')}`;
  const created = await h.request('POST', '/api/users', { body: { email, password, role } });
  if (created.status !== 201) throw new Error(`POST /api/users → ${created.status} ${JSON.stringify(created.body)}`);
  const login = await h.request('POST', '/api/auth/login', { body: { email, password }, token: null });
  if (login.status !== 200) throw new Error(`login → ${login.status} ${JSON.stringify(login.body)}`);
  return { id: created.body.id, email, password, token: login.body.access_token };
}
