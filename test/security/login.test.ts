/**
 * Login throttling that holds under concurrency and against forged proxy headers, and password
 * changes that end every session issued before them.
 */
import { startHarness, ADMIN_EMAIL, type Harness } from '../support/harness';
import { createSession } from '../support/users';
import { LOGIN_MAX_ATTEMPTS, LOGIN_WINDOW_SECS } from '../../src/api/auth/login-throttle';

let h: Harness;
/** The same platform behind a trusted proxy on loopback (TRUST_PROXY). */
let proxied: Harness;
beforeAll(async () => {
  [h, proxied] = await Promise.all([startHarness(), startHarness({ env: { TRUST_PROXY: 'loopback' } })]);
});
afterAll(async () => {
  await Promise.all([h?.stop(), proxied?.stop()]);
});
beforeEach(async () => {
  for (const harness of [h, proxied]) await harness.db.sequelize.query('DELETE FROM login_attempts');
});

const login = (harness: Harness, email: string, password: string, headers: Record<string, string> = {}) =>
  harness.request('POST', '/api/auth/login', { body: { email, password }, token: null, headers });

function tally(statuses: number[]) {
  return statuses.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
}

describe('login throttling', () => {
  it(`lets at most ${LOGIN_MAX_ATTEMPTS} of 200 parallel wrong passwords be checked; the rest get 429 with Retry-After`, async () => {
    const results = await Promise.all(Array.from({ length: 200 }, () => login(h, ADMIN_EMAIL, 'wrong-password')));
    const counts = tally(results.map((r) => r.status));
    expect(Object.keys(counts).map(Number).sort()).toEqual([401, 429]);
    expect(counts[401]).toBeLessThanOrEqual(LOGIN_MAX_ATTEMPTS);
    expect(counts[429]).toBeGreaterThanOrEqual(200 - LOGIN_MAX_ATTEMPTS);
    const refused = results.find((r) => r.status === 429)!;
    expect(refused.body.detail).toMatch(/Too many login attempts/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(LOGIN_WINDOW_SECS);
    // The right password is refused too while the address and the account are over the limit.
    expect((await login(h, ADMIN_EMAIL, 'correct-horse-battery')).status).toBe(429);
  });

  it('ignores X-Forwarded-For unless TRUST_PROXY says so: a new header per request does not escape the limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LOGIN_MAX_ATTEMPTS + 3; i++) {
      const email = `nobody-${i}@example.com`; // a different account each time: only the address counts
      statuses.push((await login(h, email, 'guess', { 'x-forwarded-for': `203.0.113.${i + 1}` })).status);
    }
    expect(tally(statuses)).toEqual({ 401: LOGIN_MAX_ATTEMPTS, 429: 3 });
  });

  it('counts per account too: behind a trusted proxy, guesses from many addresses at one account are limited', async () => {
    const member = await createSession(proxied, 'member');
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => login(proxied, ADMIN_EMAIL, 'wrong-password', { 'x-forwarded-for': `198.51.100.${i + 1}` })),
    );
    const counts = tally(results.map((r) => r.status));
    expect(counts[401]).toBeLessThanOrEqual(LOGIN_MAX_ATTEMPTS);
    expect(counts[429]).toBeGreaterThanOrEqual(40 - LOGIN_MAX_ATTEMPTS);
    // Behind the trusted proxy the client's own address is what counts: another client is unaffected.
    const other = await login(proxied, member.email, member.password, { 'x-forwarded-for': '192.0.2.77' });
    expect(other.status).toBe(200);
  });

  it('starts over when the window has passed, and a successful login clears the counts', async () => {
    for (let i = 0; i < LOGIN_MAX_ATTEMPTS; i++) expect((await login(h, ADMIN_EMAIL, 'wrong-password')).status).toBe(401);
    expect((await login(h, ADMIN_EMAIL, 'correct-horse-battery')).status).toBe(429);
    await h.db.sequelize.query(`UPDATE login_attempts SET window_started_at = now() - interval '${LOGIN_WINDOW_SECS + 1} seconds'`);
    expect((await login(h, ADMIN_EMAIL, 'correct-horse-battery')).status).toBe(200);
    const [rows] = await h.db.sequelize.query('SELECT count(*)::int AS n FROM login_attempts');
    expect((rows as Array<{ n: number }>)[0]!.n).toBe(0);
  });

  it('never stores the attempted email in clear', async () => {
    await login(h, 'Someone.Secret@Example.com', 'x');
    const [rows] = await h.db.sequelize.query('SELECT key FROM login_attempts');
    const keys = (rows as Array<{ key: string }>).map((r) => r.key);
    expect(keys).toContain('ip:127.0.0.1');
    expect(keys.join(' ')).not.toMatch(/someone/i);
  });
});

describe('password reset and change', () => {
  it('a reset invalidates every JWT the user had', async () => {
    const member = await createSession(h, 'member');
    expect((await h.request('GET', '/api/auth/me', { token: member.token })).status).toBe(200);
    await h.request('POST', '/api/auth/password-reset', { body: { email: member.email }, token: null });
    const token = h.resetTokens.get(member.email)!;
    const confirm = await h.request('POST', '/api/auth/password-reset/confirm', { body: { token, new_password: 'a-brand-new-password' }, token: null });
    expect(confirm.status).toBe(200);
    const stale = await h.request('GET', '/api/auth/me', { token: member.token });
    expect(stale.status).toBe(401);
    expect(stale.body.detail).toMatch(/password was changed/);
    const fresh = await login(h, member.email, 'a-brand-new-password');
    expect(fresh.status).toBe(200);
    expect((await h.request('GET', '/api/auth/me', { token: fresh.body.access_token })).status).toBe(200);
  });

  it('a change needs the current password, answers a new token and ends the old ones; API keys keep working', async () => {
    const member = await createSession(h, 'member');
    const key = (await h.request('POST', '/api/auth/api-keys', { token: member.token, body: { name: 'ci' } })).body.key as string;
    const wrong = await h.request('POST', '/api/auth/password', { token: member.token, body: { current_password: 'nope', new_password: 'changed-password-1' } });
    expect(wrong.status).toBe(401);
    const changed = await h.request('POST', '/api/auth/password', { token: member.token, body: { current_password: member.password, new_password: 'changed-password-1' } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ token_type: 'bearer' });
    expect((await h.request('GET', '/api/auth/me', { token: member.token })).status).toBe(401);
    expect((await h.request('GET', '/api/auth/me', { token: changed.body.access_token })).status).toBe(200);
    expect((await h.request('GET', '/api/auth/me', { token: key })).status).toBe(200);
    expect((await login(h, member.email, member.password)).status).toBe(401);
    expect((await login(h, member.email, 'changed-password-1')).status).toBe(200);
  });

  it('takes the role from the database, not from the token', async () => {
    const member = await createSession(h, 'member');
    await h.db.models.User.update({ role: 'admin' }, { where: { id: member.id } });
    expect((await h.request('GET', '/api/users', { token: member.token })).status).toBe(200);
    await h.db.models.User.update({ role: 'member' }, { where: { id: member.id } });
    expect((await h.request('GET', '/api/users', { token: member.token })).status).toBe(403);
  });
});
