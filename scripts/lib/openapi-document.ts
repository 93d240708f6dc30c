/**
 * The API's OpenAPI document without a running server or database: the route definitions are
 * built with an inert context (their handlers never run here), exactly as the API builds them.
 * Used by scripts/write-openapi.ts (the dashboard's client), scripts/sdk-generate.ts and the
 * test that keeps the checked-in SDK in step with the code.
 */
import { API_INFO } from '../../src/api/app';
import type { ApiContext } from '../../src/api/context';
import { buildOpenApi } from '../../src/api/openapi';
import { allRoutes } from '../../src/api/routes';
import { loadConfig } from '../../src/config';

/** Any property of it is itself, and so is any call: enough for route modules to set up. */
const inert: any = new Proxy(function inert() {}, {
  get: (_target, prop) => (prop === Symbol.toPrimitive ? () => '' : inert),
  apply: () => inert,
});

export function openApiDocument() {
  const ctx = { config: loadConfig({}), db: inert, box: inert, temporal: inert, notifier: inert, log: inert, jwtSecret: 'x'.repeat(32) } as ApiContext;
  return buildOpenApi(allRoutes(ctx), API_INFO);
}
