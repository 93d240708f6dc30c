/**
 * The OpenAPI document is generated from the same route definitions that serve requests, so
 * every endpoint must be in it, with its request schema and its error statuses.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { allRoutes } from '../../src/api/routes';
import { startHarness, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

it('documents every route the API serves, with errors as {detail}', async () => {
  const doc = (await h.request('GET', '/api/openapi.json', { token: null })).body;
  const routes = allRoutes(h.ctx);
  expect(routes.length).toBeGreaterThan(50);
  for (const r of routes) {
    const op = doc.paths[r.path]?.[r.method];
    expect({ route: `${r.method} ${r.path}`, documented: Boolean(op) }).toEqual({ route: `${r.method} ${r.path}`, documented: true });
    const statuses = Object.keys(op.responses).map(Number);
    expect(statuses.some((s) => s >= 200 && s < 300)).toBe(true);
    if (!r.public) expect(statuses).toContain(401);
    if (r.body) {
      expect(op.requestBody.content['application/json'].schema).toBeDefined();
      expect(statuses).toContain(422);
    }
    // Every error answer is the one Error component.
    for (const s of statuses.filter((code) => code >= 400)) {
      expect({ route: `${r.method} ${r.path}`, status: s, schema: op.responses[s].content['application/json'].schema }).toEqual({
        route: `${r.method} ${r.path}`,
        status: s,
        schema: { $ref: '#/components/schemas/Error' },
      });
    }
  }
  expect(doc.components.schemas.Error).toMatchObject({ properties: { detail: { type: 'string' } }, required: ['detail'] });
  // The spec's endpoints, and the ones designed here, are all present.
  for (const path of [
    '/api/agents',
    '/api/agents/{agent_id}',
    '/api/agents/stats',
    '/api/agents/generate',
    '/api/agents/{agent_id}/export',
    '/api/agents/import',
    '/api/agents/{agent_id}/flow',
    '/api/agents/{agent_id}/nodes/{node_key}',
    '/api/tools/{tool_id}/test',
    '/api/calls',
    '/api/calls/{call_id}/events',
    '/api/calls/outbound',
    '/api/calls/start',
    '/api/calls/end',
    '/api/calls/test',
    '/api/recordings/{call_id}',
    '/api/settings/telephony',
    '/api/settings/endpoints/{endpoint_id}',
    '/api/sidechat',
    '/api/auth/login',
    '/api/auth/api-keys',
    '/api/users',
  ]) {
    expect(Object.keys(doc.paths)).toContain(path);
  }
});

it('serves the docs page with Swagger UI from the swagger-ui-dist package, offline', async () => {
  const page = await h.request('GET', '/api/docs', { token: null });
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  // Nothing from a CDN: every script and stylesheet is a file of this server.
  expect(page.body).not.toMatch(/(src|href)="(https?:)?\/\//);
  const files = [...(page.body as string).matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  expect(files).toEqual(expect.arrayContaining(['/api/docs/swagger-ui.css', '/api/docs/swagger-ui-bundle.js', '/api/docs/init.js']));
  for (const file of files) expect((await h.request('GET', file, { token: null })).status).toBe(200);

  const bundle = await fetch(`${h.api.url}/api/docs/swagger-ui-bundle.js`);
  expect(bundle.headers.get('content-type')).toMatch(/javascript/);
  const shipped = fs.readFileSync(path.join(path.dirname(require.resolve('swagger-ui-dist/package.json')), 'swagger-ui-bundle.js'), 'utf8');
  expect(await bundle.text()).toBe(shipped);
  const init = await h.request('GET', '/api/docs/init.js', { token: null });
  expect(init.body).toContain("url: '/api/openapi.json'");

  const other = await h.request('GET', '/api/docs/package.json', { token: null });
  expect(other.status).toBe(404);
  expect(other.body.detail).toBeDefined();
});

it('answers /healthz with 503 when the database is down', async () => {
  const { connectDatabase } = await import('../../src/db/database');
  const { startApi } = await import('../../src/api/server');
  const broken = connectDatabase('postgres://postgres@127.0.0.1:1/none');
  const api = await startApi({ ...h.ctx, db: broken }, 0, '127.0.0.1');
  try {
    const res = await fetch(`${api.url}/healthz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: 'degraded', database: 'down', temporal: 'ok' });
  } finally {
    await api.stop();
    await broken.close();
  }
});

/**
 * Redocly's `recommended` ruleset, as `redocly lint` runs it, over the document as served. Its test
 * runs last: linting takes seconds, long enough for the harness's idle keep-alive socket to be reset.
 */
async function lint(doc: unknown): Promise<string[]> {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
  return problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} (${p.location[0]?.pointer ?? ''})`);
}

it('is a valid OpenAPI document with a unique camelCase operationId on every operation (Redocly recommended lint)', async () => {
  const doc = (await h.request('GET', '/api/openapi.json', { token: null })).body;
  expect(await lint(doc)).toEqual([]);

  const ids = Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((ops) =>
    Object.values(ops).map((op) => op.operationId),
  );
  // One operation per route, and POST /mcp (JSON-RPC, not a route: src/api/mcp/openapi-path.ts).
  expect(ids.length).toBe(allRoutes(h.ctx).length + 1);
  for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z0-9]*$/);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids).toEqual(expect.arrayContaining(['listCalls', 'getCall', 'createOutboundCall', 'postInboundCallWebhook', 'getInboundCallWebhook']));

  // The linter really checks: a document with an operation left unnamed is reported.
  const unnamed = structuredClone(doc);
  delete unnamed.paths['/api/calls'].get.operationId;
  expect(await lint(unnamed)).toEqual([expect.stringMatching(/^warn operation-operationId: .*~1api~1calls\/get\/operationId/)]);
}, 30_000);
