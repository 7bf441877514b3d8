// GraphiQL at GET /graphql (Accept: text/html), served by Lectern itself so it works with no
// internet (issue 12), and light to open (issue 22). It is graphiql 4 (CodeMirror 5, no Monaco) on
// the dashboard's React, built by `npm run web:build` (src/web/graphiql: `npm start` and `npm test`
// run it) into dist/graphiql: the page, index.html, and its scripts, stylesheet and fonts under
// assets/, each named by its content's hash, so served at `/_/graphiql/assets/<file>` cached for
// good (`immutable`): a second visit asks for the page alone. The build writes each text file's
// brotli and gzip copies beside it (`.br`, `.gz`); here they are only read and sent per
// Accept-Encoding, the file itself to a client that accepts neither. Nothing is compressed at
// runtime. About 400 KB on the wire with brotli for what a browser loads.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Request, RequestHandler, Response } from 'express';
import { shouldRenderGraphiQL } from 'graphql-yoga';
import mime from 'mime-types';

/** Where `npm run web:build` writes GraphiQL (src/web/graphiql/vite.config.ts). */
export const GRAPHIQL_DIR = path.resolve(import.meta.dirname, '../dist/graphiql');
/** Where its assets are served from, on Lectern's own host (app.ts mounts it after the docs router). */
export const GRAPHIQL_ASSETS = '/_/graphiql';

const IMMUTABLE = 'public, max-age=31536000, immutable';

interface File {
  type: string;
  bytes: Buffer;
  /** A sha256 prefix of `bytes`: its ETag, with the coding's name after it. */
  hash: string;
  br?: Buffer;
  gz?: Buffer;
}

interface Built {
  page: File;
  /** By path under GRAPHIQL_ASSETS: `/assets/<file>`. */
  assets: Map<string, File>;
}

function fileAt(full: string): File {
  const bytes = readFileSync(full);
  const copy = (ext: string) => (existsSync(`${full}${ext}`) ? readFileSync(`${full}${ext}`) : undefined);
  return {
    type: mime.contentType(path.extname(full)) || 'application/octet-stream',
    bytes,
    hash: createHash('sha256').update(bytes).digest('hex').slice(0, 20),
    br: copy('.br'),
    gz: copy('.gz'),
  };
}

/** The build in `dir`, read whole (a few MB); undefined while there is none. */
function readBuild(dir: string): Built | undefined {
  const page = path.join(dir, 'index.html');
  if (!existsSync(page)) return undefined;
  const assets = new Map<string, File>();
  const assetsDir = path.join(dir, 'assets');
  for (const name of existsSync(assetsDir) ? readdirSync(assetsDir) : []) {
    if (!/\.(?:br|gz)$/.test(name)) assets.set(`/assets/${name}`, fileAt(path.join(assetsDir, name)));
  }
  return { page: fileAt(page), assets };
}

/** True when If-None-Match names this file (any coding of it: they change together). */
function notModified(req: Request, hash: string): boolean {
  const tags = req.get('if-none-match');
  if (!tags) return false;
  return tags.trim() === '*' || tags.split(',').some((t) => t.trim().replace(/^W\//, '').replace(/^"|"$/g, '').split('.')[0] === hash);
}

/** Sends one representation: the best copy the client accepts that the build made, else the file itself. */
function send(req: Request, res: Response, f: File, cache: string) {
  res.set({ 'Content-Type': f.type, 'Cache-Control': cache, 'X-Content-Type-Options': 'nosniff' });
  if (f.br || f.gz) res.set('Vary', 'Accept-Encoding');
  let body = f.bytes;
  let coding: 'br' | 'gzip' | undefined;
  // express's negotiator reads Accept-Encoding (q=0 refuses a coding; no header: the file itself).
  if (f.br && req.acceptsEncodings('br')) [body, coding] = [f.br, 'br'];
  else if (f.gz && req.acceptsEncodings('gzip')) [body, coding] = [f.gz, 'gzip'];
  res.set('ETag', `"${f.hash}${coding ? `.${coding}` : ''}"`);
  if (coding) res.set('Content-Encoding', coding);
  if (notModified(req, f.hash)) return void res.status(304).end();
  res.set('Content-Length', String(body.length));
  res.status(200).end(req.method === 'HEAD' ? undefined : body);
}

const NOT_BUILT =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lectern GraphQL</title></head><body><main><h1>GraphiQL is not built</h1>' +
  '<p>Run <code>npm run web:build</code> (<code>npm start</code> and <code>npm test</code> run it), then reload. ' +
  'The GraphQL API answers meanwhile: a POST of JSON to /graphql.</p></main></body></html>';

/**
 * GraphiQL's two handlers, over one reading of the build in `dir` (kept by them, made at the first
 * request that finds it; asked again while there is none):
 * - `page`: GET /graphql from a browser (yoga's own test, shouldRenderGraphiQL: Accept names
 *   text/html): the page, compressed, `no-cache` (asked again each visit, answered 304 while it is
 *   the same, so a new Lectern's assets are found at once); 503 saying to run `npm run web:build`
 *   while there is no build. Anything else (JSON, a query in the URL asked for as JSON, POSTs)
 *   passes on to yoga.
 * - `assets`: GET `/_/graphiql/assets/<file>`: one of GraphiQL's files, immutable; anything else
 *   passes on.
 */
export function graphiql(dir = GRAPHIQL_DIR): { page: RequestHandler; assets: RequestHandler } {
  let build: Built | undefined;
  const built = () => (build ??= readBuild(dir));
  return {
    page: (req, res, next) => {
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      if (!shouldRenderGraphiQL({ method, headers: { get: (name: string) => req.get(name) ?? null } } as unknown as globalThis.Request)) return next();
      const b = built();
      if (!b) return void res.status(503).set({ 'Cache-Control': 'no-store', 'Retry-After': '60' }).type('html').send(NOT_BUILT);
      send(req, res, b.page, 'no-cache');
    },
    assets: (req, res, next) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      const f = built()?.assets.get(req.path);
      if (!f) return next();
      send(req, res, f, IMMUTABLE);
    },
  };
}
