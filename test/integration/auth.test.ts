import { startHarness, type Harness, ADMIN_EMAIL, ADMIN_PASSWORD } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

describe('health and errors', () => {
  it('reports database and Temporal as ok on /healthz without credentials', async () => {
    const res = await h.request('GET', '/healthz', { token: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', database: 'ok', temporal: 'ok' });
  });

  it('answers 401 {detail} without a token and 404 {detail} for unknown routes', async () => {
    const anon = await h.request('GET', '/api/users', { token: null });
    expect(anon.status).toBe(401);
    expect(typeof anon.body.detail).toBe('string');
    const unknown = await h.request('GET', '/api/does-not-exist');
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toMatch(/No route/);
  });

  it('answers 400 for malformed JSON and 413 for an oversized body', async () => {
    const bad = await h.request('POST', '/api/auth/login', { raw: '{"email":', token: null });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ detail: 'Malformed JSON body' });
    const big = await h.request('POST', '/api/auth/login', { raw: JSON.stringify({ email: 'x'.repeat(2_000_000) }), token: null });
    expect(big.status).toBe(413);
    expect(big.body.detail).toMatch(/larger than the limit/);
  });

  it('answers 422 naming the field for invalid input', async () => {
    const res = await h.request('POST', '/api/auth/login', { body: { email: 'not-an-email', password: 'x' }, token: null });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/^email: /);
  });

  it('rejects a tampered or expired JWT with 401', async () => {
    const token = await h.adminToken();
    const tampered = await h.request('GET', '/api/auth/me', { token: token.slice(0, -3) + 'abc' });
    expect(tampered.status).toBe(401);
    const jwt = await import('jsonwebtoken');
    const expired = jwt.sign({ email: ADMIN_EMAIL, role: 'admin', exp: Math.floor(Date.now() / 1000) - 10 }, h.config.JWT_SECRET!, { subject: 'x' });
    const res = await h.request('GET', '/api/auth/me', { token: expired });
    expect(res.status).toBe(401);
    expect(res.body.detail).toBe('Token expired');
  });
});

describe('login', () => {
  it('returns a bearer JWT for the admin and the caller at /api/auth/me', async () => {
    const login = await h.request('POST', '/api/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }, token: null });
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    const me = await h.request('GET', '/api/auth/me', { token: login.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ email: ADMIN_EMAIL, role: 'admin' });
    expect(me.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
  });

  it('rejects a wrong password with 401 and rate-limits repeated failures with 429', async () => {
    const attempt = () => h.request('POST', '/api/auth/login', { body: { email: ADMIN_EMAIL, password: 'wrong-password' }, token: null });
    const first = await attempt();
    expect(first.status).toBe(401);
    expect(first.body.detail).toBe('Wrong email or password');
    let last = first;
    for (let i = 0; i < 10; i++) last = await attempt();
    expect(last.status).toBe(429);
    // Retry-After: the seconds left in the 15-minute window that began with the first attempt.
    const retryAfter = Number(last.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
    // Even the right password is refused while the client is throttled.
    const right = await h.request('POST', '/api/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD }, token: null });
    expect(right.status).toBe(429);
    await h.db.sequelize.query('DELETE FROM login_attempts');
  });
});

describe('API keys', () => {
  it('works in place of a JWT, is listed without its secret, and stops working once revoked', async () => {
    const created = await h.request('POST', '/api/auth/api-keys', { body: { name: 'ci' } });
    expect(created.status).toBe(201);
    const key: string = created.body.key;
    expect(key.startsWith('vap_')).toBe(true);

    const withKey = await h.request('GET', '/api/auth/me', { token: key });
    expect(withKey.status).toBe(200);
    expect(withKey.body.email).toBe(ADMIN_EMAIL);

    const list = await h.request('GET', '/api/auth/api-keys');
    expect(list.status).toBe(200);
    const listed = list.body.find((k: any) => k.id === created.body.id);
    expect(listed).toMatchObject({ name: 'ci', prefix: key.slice(0, 10) });
    expect(JSON.stringify(list.body)).not.toContain(key);

    const stored = await h.db.models.ApiKey.findByPk(created.body.id);
    expect(stored!.get('key_hash')).not.toContain(key.slice(4));

    expect((await h.request('DELETE', `/api/auth/api-keys/${created.body.id}`)).status).toBe(204);
    const revoked = await h.request('GET', '/api/auth/me', { token: key });
    expect(revoked.status).toBe(401);
    expect((await h.request('DELETE', `/api/auth/api-keys/${created.body.id}`)).status).toBe(404);
  });
});

describe('password reset and users', () => {
  it('resets a password with a single-use token and never reveals whether an email exists', async () => {
    const created = await h.request('POST', '/api/users', { body: { email: 'ops@example.com', password: 'first-password' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ email: 'ops@example.com', role: 'member' });

    const unknown = await h.request('POST', '/api/auth/password-reset', { body: { email: 'nobody@example.com' }, token: null });
    const known = await h.request('POST', '/api/auth/password-reset', { body: { email: 'ops@example.com' }, token: null });
    expect(unknown.status).toBe(202);
    expect(known.status).toBe(202);
    expect(unknown.body).toEqual(known.body);
    const token = h.resetTokens.get('ops@example.com')!;
    expect(token).toBeDefined();

    const confirm = () =>
      h.request('POST', '/api/auth/password-reset/confirm', { body: { token, new_password: 'second-password' }, token: null });
    expect((await confirm()).status).toBe(200);
    expect((await confirm()).status).toBe(400);

    const oldLogin = await h.request('POST', '/api/auth/login', { body: { email: 'ops@example.com', password: 'first-password' }, token: null });
    expect(oldLogin.status).toBe(401);
    const newLogin = await h.request('POST', '/api/auth/login', { body: { email: 'ops@example.com', password: 'second-password' }, token: null });
    expect(newLogin.status).toBe(200);

    // A member cannot manage users.
    const asMember = await h.request('GET', '/api/users', { token: newLogin.body.access_token });
    expect(asMember.status).toBe(403);

    const dup = await h.request('POST', '/api/users', { body: { email: 'ops@example.com', password: 'another-one' } });
    expect(dup.status).toBe(409);

    const users = await h.request('GET', '/api/users');
    const ops = users.body.find((u: any) => u.email === 'ops@example.com');
    expect((await h.request('DELETE', `/api/users/${ops.id}`)).status).toBe(204);
    // The deleted user's token stops working at once.
    expect((await h.request('GET', '/api/auth/me', { token: newLogin.body.access_token })).status).toBe(401);
  });

  it('stores passwords as scrypt hashes', async () => {
    const admin = await h.db.models.User.findOne({ where: { email: ADMIN_EMAIL } });
    expect(admin!.get('password_hash')).toMatch(/^scrypt\$32768\$8\$1\$/);
  });
});

describe('OpenAPI', () => {
  it('serves an OpenAPI 3.1 document listing the auth endpoints and a docs page', async () => {
    const doc = await h.request('GET', '/api/openapi.json', { token: null });
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    expect(doc.body.paths['/api/auth/login'].post.responses['401']).toBeDefined();
    const page = await h.request('GET', '/api/docs', { token: null });
    expect(page.status).toBe(200);
    expect(page.body).toContain('openapi.json');
  });
});
