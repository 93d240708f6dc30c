/**
 * The API serves the built dashboard at / and hands every other page address to it (the browser
 * app routes it), without ever answering the API's own prefixes with the page.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureDashboardBuilt } from '../support/dashboard-build';
import { startHarness, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  ensureDashboardBuilt();
  h = await startHarness();
}, 180_000);
afterAll(async () => {
  await h?.stop();
});

const get = (urlPath: string, headers: Record<string, string> = {}) => fetch(`${h.api.url}${urlPath}`, { headers });

describe('the dashboard at /', () => {
  it('answers the page for / and for any page address, never cached', async () => {
    for (const page of ['/', '/agents', '/agents/6f0c2d1e-0000-4000-8000-000000000000/flow', '/calls?status=failed']) {
      const res = await get(page, { accept: 'text/html' });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(await res.text()).toContain('<div id="root"></div>');
    }
  });

  it('serves the built assets with a long cache life, and a missing one as a JSON 404', async () => {
    const html = await (await get('/')).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const asset = await get(script);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(asset.headers.get('cache-control')).toMatch(/immutable/);
    expect(fs.existsSync(path.join(__dirname, '..', '..', 'web', 'dist', script))).toBe(true);

    const missing = await get('/assets/nothing-here.js');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toHaveProperty('detail');
  });

  it('leaves /api, /telephony, /media and /healthz to the platform', async () => {
    const anonymous = await get('/api/agents', { accept: 'text/html' });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({ detail: 'Missing bearer token' });
    const unknownApi = await h.request('GET', '/api/no-such-thing', { headers: { accept: 'text/html' } });
    expect(unknownApi).toMatchObject({ status: 404, body: { detail: 'No route for GET /api/no-such-thing' } });
    for (const other of ['/telephony/twilio/nothing', '/media/twilio']) {
      const res = await get(other, { accept: 'text/html' });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    }
    const health = await get('/healthz', { accept: 'text/html' });
    expect(health.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('answers JSON, not the page, to clients that do not ask for HTML', async () => {
    const res = await get('/agents', { accept: 'application/json' });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });
});
