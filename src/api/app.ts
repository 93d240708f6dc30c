/**
 * The Express application: JSON parsing with a size limit, public routes (login, password reset,
 * health, docs, telephony callbacks), bearer authentication for everything else under /api, the
 * web dashboard at / (web/dist), and one error handler that answers `{detail}`.
 */
import express from 'express';
import type { ApiContext } from './context';
import { authenticate } from './auth/authenticate';
import { errorHandler, notFoundRoute } from './errors';
import { cleanInput } from './http/clean-input';
import { holdInputErrors, methodNotAllowed, timestampReplacer } from './http/conformance';
import { dashboardRouter } from './http/dashboard';
import { webCallCors } from './http/web-call-cors';
import { docsRouter } from './docs';
import { buildOpenApi } from './openapi';
import { mountRoutes, type AnyRoute } from './route';
import { healthHandler } from './routes/health';
import { serveMetrics } from '../observability/metrics-endpoint';
import { allRoutes } from './routes';
import { mcpRouter } from './mcp/endpoint';

export const API_INFO = {
  title: 'Voice Agent Platform API',
  version: '1.0.0',
  license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
  description:
    'Self-hostable voice AI agents on Temporal. All endpoints except login, password reset, /healthz and the docs require `Authorization: Bearer <JWT or API key>`. Errors are JSON `{ "detail": string }` (the `Error` schema). Timestamps are UTC without an offset, `YYYY-MM-DDTHH:MM:SS` (the event trace adds milliseconds).',
};

export function createApp(ctx: ApiContext, extraRoutes: AnyRoute[] = []) {
  const routes = [...allRoutes(ctx), ...extraRoutes];
  const openapi = buildOpenApi(routes, API_INFO);
  const app = express();
  app.disable('x-powered-by');
  // X-Forwarded-For is believed only from the proxies TRUST_PROXY names; otherwise any client
  // could pick its own address and escape the login throttle.
  app.set('trust proxy', ctx.config.TRUST_PROXY);
  // Dates reach responses in the API's one timestamp form (src/shared/time.ts).
  app.set('json replacer', timestampReplacer);
  // Input errors are held, not answered, until the route has checked who is asking
  // (http/conformance.ts): an anonymous caller with a bad body is told 401, not 400.
  // Document uploads come base64-encoded (a third larger than the file) in a body of their own
  // size; body-parser skips a body already parsed, so the general limit below does not apply.
  const uploadLimit = Math.ceil(((ctx.config.KNOWLEDGE_MAX_DOCUMENT_MB * 1e6) / 3) * 4) + 64 * 1024;
  app.post('/api/knowledge-bases/:knowledge_base_id/documents', holdInputErrors(express.json({ limit: uploadLimit })));
  app.use(holdInputErrors(express.json({ limit: ctx.config.BODY_LIMIT })));
  // Telephony providers post form-encoded callbacks.
  app.use(holdInputErrors(express.urlencoded({ extended: false, limit: ctx.config.BODY_LIMIT })));
  // NUL bytes, lone surrogates and deep nesting are refused for every route (422).
  app.use(holdInputErrors(cleanInput));

  app.get('/healthz', healthHandler(ctx));
  app.get('/metrics', (req, res) => void serveMetrics(req, res, ctx.config.METRICS_TOKEN));
  app.get('/api/openapi.json', (_req, res) => res.json(openapi));
  app.use(docsRouter());

  const publicRouter = express.Router();
  mountRoutes(publicRouter, routes.filter((r) => r.public));
  app.use(publicRouter);

  // Before authentication: a CORS preflight carries no credentials.
  app.use(webCallCors(ctx.db));
  const protectedRouter = express.Router();
  protectedRouter.use('/api', authenticate(ctx.db, ctx.jwtSecret));
  mountRoutes(protectedRouter, routes.filter((r) => !r.public));
  app.use(protectedRouter);

  // The platform as an MCP server (docs/mcp-server.md), with the same credentials as /api.
  app.use(mcpRouter(ctx, routes));
  app.use(dashboardRouter());
  const fixedPaths = [
    { method: 'get', path: '/healthz' },
    { method: 'get', path: '/metrics' },
    { method: 'get', path: '/api/openapi.json' },
  ];
  app.use(methodNotAllowed([...fixedPaths, ...routes]));
  app.use(notFoundRoute);
  app.use(errorHandler(ctx.log));
  return app;
}
