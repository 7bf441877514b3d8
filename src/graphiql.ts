// GraphiQL at GET /graphql (Accept: text/html), served by Lectern itself so it works with no
// internet (issue 12), and light enough to open quickly (issue 22). @graphql-yoga/render-graphiql
// ships GraphiQL's scripts, styles, fonts and Monaco's three workers as strings; its own
// renderGraphiQL() inlines them all into one 9 MB page that no cache can keep. Here the page is
// about 1 KB, and each part is a file of its own under a content-hashed URL,
// `/_/graphiql/<sha256 prefix>.<ext>`, cached for good (`immutable`): a second visit asks for the
// page alone. The stylesheet's 36 inlined fonts become files too, so a browser fetches only those
// whose unicode-range the page uses. Text parts are sent brotli- or gzip-compressed per
// Accept-Encoding: gzip made on first need (a quarter second for the largest part), brotli at its
// best quality made once per process in the background (half a minute of one core in all, on
// libuv's threadpool, never the event loop) and sent once made. node:zlib does both; the
// `compression` middleware would compress the same 5 MB again for every request.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import * as bundle from '@graphql-yoga/render-graphiql/graphiql';
import type { Request, RequestHandler, Response } from 'express';
import { type GraphiQLOptions, shouldRenderGraphiQL } from 'graphql-yoga';

/** Where the parts are served from, on Lectern's own host (app.ts mounts it after the docs router). */
export const GRAPHIQL_ASSETS = '/_/graphiql';

const IMMUTABLE = 'public, max-age=31536000, immutable';
const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

interface Asset {
  file: string;
  type: string;
  bytes: Buffer;
  /** The sha256 prefix that names it: its URL and its ETag. */
  hash: string;
  gz?: Promise<Buffer>;
  br?: Buffer;
  /** Fonts in woff/woff2 are compressed already. */
  compress: boolean;
}

function asset(content: string | Buffer, ext: string, type: string, compress = true): Asset {
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 20);
  return { file: `${hash}.${ext}`, type, bytes, hash, compress };
}

const FONT_TYPES: Record<string, [ext: string, compress: boolean]> = {
  'font/ttf': ['ttf', true],
  'font/woff': ['woff', false],
  'font/woff2': ['woff2', false],
};

interface Parts {
  assets: Map<string, Asset>;
  css: Asset;
  js: Asset;
  workers: Record<'editorWorkerService' | 'json' | 'graphql', Asset>;
}

let parts: Parts | undefined;

/** The bundle's parts as files, made on first use (the strings are read once, hashed once). */
function graphiqlParts(): Parts {
  if (parts) return parts;
  const assets = new Map<string, Asset>();
  const add = (a: Asset) => (assets.set(a.file, a), a);
  // Fonts out of the stylesheet, each named relative to it (so under GRAPHIQL_ASSETS too).
  const css = bundle.css.replace(/url\((["']?)data:(font\/[a-z0-9]+);base64,([A-Za-z0-9+/=]+)\1\)/g, (whole, _q, type: string, b64: string) => {
    const kind = FONT_TYPES[type];
    if (!kind) return whole;
    return `url(${add(asset(Buffer.from(b64, 'base64'), kind[0], type, kind[1])).file})`;
  });
  const js = 'text/javascript; charset=utf-8';
  parts = {
    assets,
    css: add(asset(css, 'css', 'text/css; charset=utf-8')),
    js: add(asset(bundle.js, 'js', js)),
    workers: {
      editorWorkerService: add(asset(bundle.editorWorkerService, 'js', js)),
      json: add(asset(bundle.jsonWorker, 'js', js)),
      graphql: add(asset(bundle.graphqlWorker, 'js', js)),
    },
  };
  return parts;
}

let compressing: Promise<void> | undefined;

/**
 * Starts making every text part's gzip copy, then its brotli copy (one part at a time, so one
 * core at most); resolves when all are made. The first call starts it; later calls share it.
 */
export function graphiqlCompressed(): Promise<void> {
  compressing ??= (async () => {
    const text = [...graphiqlParts().assets.values()].filter((a) => a.compress);
    for (const a of text) await gzipOf(a);
    for (const a of text) {
      a.br = await brotli(a.bytes, {
        params: { [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: a.bytes.length },
      });
    }
  })();
  return compressing;
}

function gzipOf(a: Asset): Promise<Buffer> {
  a.gz ??= gzip(a.bytes, { level: zlib.constants.Z_BEST_COMPRESSION });
  return a.gz;
}

/** The codings an Accept-Encoding header allows (q > 0), by name. */
function accepted(header: string | undefined): Set<string> {
  const names = new Set<string>();
  for (const part of (header ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q\s*=\s*([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    if (name && (q === undefined || Number(q) > 0)) names.add(name);
  }
  return names;
}

/** True when If-None-Match names this part (any coding of it: its bytes never change under its URL). */
function notModified(req: Request, hash: string): boolean {
  const tags = req.get('if-none-match');
  if (!tags) return false;
  return tags.trim() === '*' || tags.split(',').some((t) => t.trim().replace(/^W\//, '').replace(/^"|"$/g, '').split('.')[0] === hash);
}

/** Sends one representation: the best coding the client accepts that is made (or, for gzip, makes it). */
async function send(
  req: Request,
  res: Response,
  a: { hash: string; type: string; bytes: Buffer; compress: boolean; gz?: Promise<Buffer>; br?: Buffer },
  cache: string,
) {
  res.set({ 'Content-Type': a.type, 'Cache-Control': cache, 'X-Content-Type-Options': 'nosniff' });
  if (a.compress) res.set('Vary', 'Accept-Encoding');
  const codings = a.compress ? accepted(req.get('accept-encoding')) : new Set<string>();
  let body = a.bytes;
  let coding: 'br' | 'gzip' | undefined;
  if (codings.has('br') && a.br) [body, coding] = [a.br, 'br'];
  else if (codings.has('gzip') && a.gz) [body, coding] = [await a.gz, 'gzip'];
  res.set('ETag', `"${a.hash}${coding ? `.${coding}` : ''}"`);
  if (coding) res.set('Content-Encoding', coding);
  if (notModified(req, a.hash)) return void res.status(304).end();
  res.set('Content-Length', String(body.length));
  res.status(200).end(req.method === 'HEAD' ? undefined : body);
}

/** GET `/_/graphiql/<file>`: one part of GraphiQL, immutable; anything else passes on. */
export function graphiqlAssets(): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const a = graphiqlParts().assets.get(req.path.replace(/^\//, ''));
    if (!a) return next();
    void graphiqlCompressed();
    if (a.compress && accepted(req.get('accept-encoding')).has('gzip')) void gzipOf(a);
    send(req, res, a, IMMUTABLE).catch(next);
  };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** JSON safe inside a <script> element. */
const scriptJson = (v: unknown) =>
  JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

/**
 * The page: what render-graphiql's renderGraphiQL() writes (same element ids and classes, same
 * Monaco setup and call to renderYogaGraphiQL), with its parts loaded from their URLs. Monaco's
 * workers are same-origin script URLs instead of blob: URLs made from inlined strings. The icon is
 * Lectern's (/favicon.ico) instead of Yoga's inlined 150 KB one.
 */
export function graphiqlHtml(opts: GraphiQLOptions = {}): string {
  const p = graphiqlParts();
  const url = (a: Asset) => `${GRAPHIQL_ASSETS}/${a.file}`;
  const workers = Object.fromEntries(Object.entries(p.workers).map(([label, a]) => [label, url(a)]));
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(opts.title || 'Yoga GraphiQL')}</title>
<link rel="stylesheet" href="${url(p.css)}">
</head>
<body id="body" class="no-focus-outline">
<noscript>You need to enable JavaScript to run this app.</noscript>
<div id="root"></div>
<script>
const workers = ${scriptJson(workers)};
self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_moduleId, label) => workers[label] };
</script>
<script src="${url(p.js)}"></script>
<script>YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), ${scriptJson(opts)});</script>
</body>
</html>
`;
}

/**
 * GET /graphql from a browser (yoga's own test, shouldRenderGraphiQL: Accept names text/html): the
 * page, compressed, `no-cache` (asked again each visit, answered 304 while it is the same, so a new
 * Lectern's parts are found at once). Anything else passes on to yoga.
 */
export function graphiqlPage(opts: GraphiQLOptions): RequestHandler {
  let page: { hash: string; type: string; bytes: Buffer; compress: true; gz: Promise<Buffer>; br: Buffer } | undefined;
  return (req, res, next) => {
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    if (!shouldRenderGraphiQL({ method, headers: { get: (name: string) => req.get(name) ?? null } } as unknown as globalThis.Request)) return next();
    if (!page) {
      const bytes = Buffer.from(graphiqlHtml(opts));
      const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 20);
      page = {
        hash,
        type: 'text/html; charset=utf-8',
        bytes,
        compress: true,
        gz: Promise.resolve(zlib.gzipSync(bytes, { level: 9 })),
        br: zlib.brotliCompressSync(bytes),
      };
    }
    // The parts a browser asks for next start compressing now.
    void graphiqlCompressed();
    send(req, res, page, 'no-cache').catch(next);
  };
}
