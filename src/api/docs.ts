/**
 * The API docs page: Swagger UI (the `swagger-ui-dist` package) rendering /api/openapi.json. Every
 * file is served from node_modules by this server, so the page works offline and loads nothing
 * from a CDN; the page's script is a file too, not inline, so a strict Content-Security-Policy
 * (`script-src 'self'`) allows it.
 */
import path from 'node:path';
import express, { type Router } from 'express';
import { notFound } from './errors';

const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
// The only files of the package the page needs.
const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png']);

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Voice Agent Platform API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/api/docs/swagger-ui.css"><link rel="icon" type="image/png" href="/api/docs/favicon-32x32.png">
</head><body>
<noscript><p>Machine-readable document: <a href="/api/openapi.json">/api/openapi.json</a></p></noscript>
<div id="swagger-ui"></div>
<script src="/api/docs/swagger-ui-bundle.js"></script><script src="/api/docs/init.js"></script>
</body></html>`;

const INIT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/api/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

/** GET /api/docs and its files; public, like the OpenAPI document. */
export function docsRouter(): Router {
  const router = express.Router();
  router.get('/api/docs', (_req, res) => res.type('html').send(PAGE));
  router.get('/api/docs/init.js', (_req, res) => res.type('js').send(INIT));
  router.get('/api/docs/:file', (req, res, next) => {
    const file = req.params.file as string;
    if (!ASSETS.has(file)) return next(notFound('Docs file'));
    res.sendFile(path.join(SWAGGER_UI_DIR, file), { maxAge: '1d' });
  });
  return router;
}
