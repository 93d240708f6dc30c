/**
 * Serves the web dashboard (web/, built into web/dist) at the root of the API's address: its files
 * as they are, and index.html for any other page address so the browser app can route it
 * (/agents/…, /calls/…). The API's own prefixes are never answered with the page.
 */
import fs from 'node:fs';
import path from 'node:path';
import express, { type Router } from 'express';
import { HttpError } from '../errors';

export const DASHBOARD_DIST_DIR = path.resolve(__dirname, '..', '..', '..', 'web', 'dist');
const NOT_PAGES = /^\/(api|telephony|media|healthz)(\/|$)/;

export function dashboardRouter(distDir = DASHBOARD_DIST_DIR): Router {
  const router = express.Router();
  const indexHtml = path.join(distDir, 'index.html');
  // Built files under assets/ carry a content hash in their name: cache them for good.
  router.use('/assets', express.static(path.join(distDir, 'assets'), { immutable: true, maxAge: '365d', fallthrough: false }));
  router.use(express.static(distDir, { index: false }));
  router.get(/.*/, (req, res, next) => {
    if (NOT_PAGES.test(req.path) || !req.accepts('html')) return next();
    if (!fs.existsSync(indexHtml)) return next(new HttpError(404, 'The dashboard is not built: run `npm run build:web` (npm start does it)'));
    res.set('Cache-Control', 'no-cache').sendFile(indexHtml);
  });
  return router;
}
