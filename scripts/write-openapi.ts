/**
 * Writes the API's OpenAPI document to a file without a running server or database: the route
 * definitions are built with an inert context (their handlers never run here), exactly as the API
 * builds them, so the dashboard's generated client always matches the code it is built with.
 *
 *   tsx scripts/write-openapi.ts <out.json>
 */
import fs from 'node:fs';
import path from 'node:path';
import { API_INFO } from '../src/api/app';
import type { ApiContext } from '../src/api/context';
import { buildOpenApi } from '../src/api/openapi';
import { allRoutes } from '../src/api/routes';
import { loadConfig } from '../src/config';

/** Any property of it is itself, and so is any call: enough for route modules to set up. */
const inert: any = new Proxy(function inert() {}, {
  get: (_target, prop) => (prop === Symbol.toPrimitive ? () => '' : inert),
  apply: () => inert,
});

function openApiDocument() {
  const ctx = { config: loadConfig({}), db: inert, box: inert, temporal: inert, notifier: inert, log: inert, jwtSecret: 'x'.repeat(32) } as ApiContext;
  return buildOpenApi(allRoutes(ctx), API_INFO);
}

const out = process.argv[2];
if (!out) {
  process.stderr.write('usage: tsx scripts/write-openapi.ts <out.json>\n');
  process.exit(2);
}
fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
fs.writeFileSync(out, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
