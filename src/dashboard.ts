// The dashboard (src/web, built by `npm run web:build` into dist/web, which `npm start` and
// `npm test` run): its hashed assets, cached for good, and its one page for every route of the
// app (src/web/routes.ts, the list the app renders too), so a bookmarked or reloaded
// /projects/<slug>/builds opens where it was. The page has a strict
// Content-Security-Policy (its own scripts and styles only, talking to its own origin); that it may
// not be framed (so another page, a project's docs included, cannot overlay or read it) app.ts
// notFramed adds, as to every answer of Lectern's own.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import express, { type Router } from 'express';
import { ANY_ROUTE } from './web/routes.ts';

export const DASHBOARD_DIR = path.resolve(import.meta.dirname, '../dist/web');
const FAVICON = path.resolve(import.meta.dirname, 'web/favicon.svg');

const HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
};

const NOT_BUILT =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lectern</title></head><body><main><h1>The dashboard is not built</h1>' +
  '<p>Run <code>npm run web:build</code> (<code>npm start</code> and <code>npm test</code> run it), then reload. ' +
  'The APIs are served meanwhile: <a href="/graphql">/graphql</a>, <a href="/api/v3/">/api/v3/</a>.</p></main></body></html>';

export function dashboardRouter(dir = DASHBOARD_DIR): Router {
  const router = express.Router();
  router.use(
    '/assets',
    express.static(path.join(dir, 'assets'), {
      immutable: true,
      maxAge: '365d',
      index: false,
      fallthrough: false,
      setHeaders: (res) => res.set('X-Content-Type-Options', 'nosniff'),
    }),
  );
  // What a browser asks of every page without an icon of its own (GraphiQL, error pages): the dashboard's icon.
  let icon: Buffer | undefined;
  router.get('/favicon.ico', (_req, res) => {
    icon ??= readFileSync(FAVICON);
    res.set('Cache-Control', 'public, max-age=86400').set('X-Content-Type-Options', 'nosniff').type('image/svg+xml').send(icon);
  });
  let page: Buffer | undefined;
  router.get(ANY_ROUTE, (_req, res) => {
    const file = path.join(dir, 'index.html');
    page ??= existsSync(file) ? readFileSync(file) : undefined;
    res.set(HEADERS).set('Cache-Control', 'no-cache');
    if (!page) return void res.status(503).type('html').send(NOT_BUILT);
    res.type('html').send(page);
  });
  return router;
}
