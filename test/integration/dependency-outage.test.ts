/**
 * The API while a dependency is away (docs/call-lifecycle.md, "What each failure does"): with
 * PostgreSQL unreachable (a TCP proxy in front of the real server, taken down), requests that need
 * it answer 503 `{detail}` with Retry-After at once — never a 500, never a hang — and /healthz says
 * which dependency is down; when it is back, everything answers again.
 */
import { startHarness, type Harness } from '../support/harness';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

let h: Harness;
let proxy: TcpProxy;

beforeAll(async () => {
  const pg = new URL(process.env.VAP_TEST_PG_URL!);
  proxy = await startTcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
  h = await startHarness({
    databaseVia: (url) => {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(proxy.port);
      return u.toString();
    },
  });
  await h.adminToken(); // logged in while the database is there
});
afterAll(async () => {
  proxy?.up();
  await h?.stop();
  await proxy?.stop();
});

describe('PostgreSQL unreachable', () => {
  it('answers 503 with Retry-After, quickly, and /healthz names the database; all is well once it is back', async () => {
    expect((await h.request('GET', '/api/calls')).status).toBe(200);
    proxy.down();
    try {
      const startedAt = Date.now();
      const res = await h.request('GET', '/api/calls');
      expect(Date.now() - startedAt).toBeLessThan(5_000);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.body).toEqual({ detail: 'The database is unavailable; try again shortly' });
      const agents = await h.request('GET', '/api/agents');
      expect(agents.status).toBe(503);
      const health = await fetch(`${h.api.url}/healthz`);
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({ status: 'degraded', database: 'down', temporal: 'ok' });
    } finally {
      proxy.up();
    }
    const back = await h.request('GET', '/api/calls');
    expect(back.status).toBe(200);
    expect((await fetch(`${h.api.url}/healthz`)).status).toBe(200);
  }, 60_000);
});
