// Benchmark (not a test): what serving a docs page through Lectern costs next to nginx serving the
// very same stored file. One run builds the fixture Sphinx project, publishes it into file:
// storage on a real PostgreSQL, starts Lectern (a real listening server) and nginx on 127.0.0.1,
// and loads one page with wrk in turn:
//   nginx           nginx's static file serving from the storage directory (the ceiling)
//   lectern         GET /docs/bench/en/latest/guide/install.html (the switcher tag put in)
//   lectern-gzip    the same asked with Accept-Encoding: gzip, as browsers ask
//   lectern-plain   the same with the addons script off (bytes streamed as stored)
//   nginx+x-accel   nginx in front of Lectern with LECTERN_SERVE_X_ACCEL (Lectern decides, nginx sends)
//   lectern-nocache the first again with LECTERN_SERVE_CACHE_SECONDS=0 (every request asks the database)
//   node-bare       a bare node:http server answering the same bytes from memory: the ceiling for
//                   any single Node process, before express, access checks and storage
// and prints requests per second, latency and the ratios to nginx and to node-bare.
// Needs wrk and nginx: `apt-get install -y wrk nginx` when they are missing.
// Run: npx tsx test/bench/serve-vs-nginx.ts [seconds-per-round]
// First: the app runs as `lectern serve` runs it, in production mode (src/bin.js).
import './production-mode.ts';

import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createEvents } from '../../src/events.ts';
import { createLogger } from '../../src/log.ts';
import { artifactPrefix } from '../../src/storage/artifacts.ts';
import { openStorage } from '../../src/storage/index.ts';
import { freePort } from '../helpers/net.ts';
import { startPostgres, withDatabase } from '../setup/postgres.ts';

const run = promisify(execFile);
const seconds = Number(process.argv[2] ?? 8);
const WRK = '/usr/bin/wrk';
const NGINX = '/usr/sbin/nginx';
for (const [file, pkg] of [
  [WRK, 'wrk'],
  [NGINX, 'nginx'],
  ['/usr/bin/sphinx-build', 'python3-sphinx'],
]) {
  if (!existsSync(file)) {
    console.error(`${file} is missing: apt-get install -y ${pkg}`);
    process.exit(2);
  }
}

const work = await mkdtemp(path.join(os.tmpdir(), 'lectern-serve-bench-'));
const html = path.join(work, 'html');
await run('/usr/bin/sphinx-build', [
  '-q',
  '-b',
  'html',
  '-d',
  path.join(work, 'doctrees'),
  path.resolve(import.meta.dirname, '../fixtures/serve/sphinx'),
  html,
]);
const PAGE = 'guide/install.html';
const pageBytes = (await readFile(path.join(html, PAGE))).length;

const { adminUrl, stop } = await startPostgres();
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query('DROP DATABASE IF EXISTS lectern_serve_bench');
await admin.query('CREATE DATABASE lectern_serve_bench');
await admin.end();
const databaseUrl = withDatabase(adminUrl, 'lectern_serve_bench');
const storageDir = path.join(work, 'storage');
// Docs under /docs/ of the one origin (no docs hosts), as nginx's side serves them.
const env = {
  LECTERN_DATA_DIR: path.join(work, 'data'),
  DATABASE_URL: databaseUrl,
  LECTERN_LOG_LEVEL: 'silent',
  LECTERN_STORAGE: `file:${storageDir}`,
  LECTERN_DOCS_DOMAIN: 'off',
};
const db = await openDatabase({ dataDir: env.LECTERN_DATA_DIR, databaseUrl });
const prisma = db.prisma;

// Published as the pipeline's step 5 does: files first, then the version points at the build.
const project = await prisma.project.create({ data: { name: 'bench', slug: 'bench', repositoryUrl: 'https://example.com/bench.git' } });
const version = await prisma.version.create({ data: { projectId: project.id, slug: 'latest', verboseName: 'latest', active: true, machine: true } });
const build = await prisma.build.create({
  data: { projectId: project.id, versionId: version.id, versionSlug: 'latest', state: 'finished', success: true, finishedAt: new Date() },
});
const prefix = artifactPrefix('bench', 'latest', build.id, 'html');
await openStorage(env.LECTERN_STORAGE).putDirectory(html, prefix);
await prisma.version.update({ where: { id: version.id }, data: { publishedBuildId: build.id, built: true } });

/** One set of events for every app below: a write told to one empties the caches of all. */
const events = createEvents();

async function listen(extra: Record<string, string>): Promise<{ port: number; close: () => Promise<void> }> {
  const config = loadConfig({ ...env, ...extra });
  // Listening as `lectern serve` does: the docs fast path in front of express.
  const { handler } = buildApp({ config, db, log: createLogger('silent'), secretKey: 'bench-secret-key-0123456789abcdef012345', events });
  const server = http.createServer(handler).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((r) => server.close(() => r())) };
}

/** nginx with one worker (Lectern is one process too): static files, and a proxy to Lectern with the X-Accel location. */
async function startNginx(lecternPort: number): Promise<{ port: number; proxyPort: number; stop: () => void }> {
  const [port, proxyPort] = [await freePort(), await freePort()];
  const conf = path.join(work, 'nginx.conf');
  await writeFile(
    conf,
    `${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
pid ${work}/nginx.pid;
error_log ${work}/nginx-error.log warn;
events { worker_connections 1024; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  sendfile on;
  keepalive_requests 100000;
  upstream lectern { server 127.0.0.1:${lecternPort}; keepalive 32; }
  server {
    listen 127.0.0.1:${port};
    root ${storageDir}/objects;
  }
  server {
    listen 127.0.0.1:${proxyPort};
    location / {
      proxy_pass http://lectern;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
    }
    location /_lectern_files/ {
      internal;
      alias ${storageDir}/objects/;
    }
  }
}
`,
  );
  const child = spawn(NGINX, ['-c', conf, '-p', work, '-g', 'daemon off;'], { stdio: 'inherit' });
  for (let i = 0; i < 50; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/`).then(
      () => true,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, proxyPort, stop: () => child.kill('SIGQUIT') };
}

interface Result {
  name: string;
  rps: number;
  latency: string;
  non2xx: number;
}

async function wrk(name: string, url: string, headers: Record<string, string> = {}): Promise<Result> {
  // Check the URL answers the page before measuring it (fetch decodes a gzip answer).
  const check = await fetch(url, { headers });
  const body = await check.text();
  if (check.status !== 200 || !body.includes('Installation')) throw new Error(`${name}: ${url} answered ${check.status}`);
  if (headers['accept-encoding'] && check.headers.get('content-encoding') !== 'gzip') throw new Error(`${name}: ${url} answered without gzip`);
  const h = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  // Asynchronous: Lectern answers from this very process while wrk runs.
  const { stdout: out } = await run(WRK, ['-t2', '-c50', `-d${seconds}s`, '--latency', ...h, url], { encoding: 'utf8' });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
  const p50 = /^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? '?';
  const p99 = /^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '?';
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  return { name, rps, latency: `p50 ${p50}, p99 ${p99}`, non2xx };
}

/** The reference: node:http with no framework, no lookups, no storage. */
async function bareNode(): Promise<{ port: number; close: () => Promise<void> }> {
  const page = await readFile(path.join(html, PAGE));
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': page.length, 'Cache-Control': 'public, no-cache' });
    res.end(page);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((r) => server.close(() => r())) };
}

const lectern = await listen({});
const nocache = await listen({ LECTERN_SERVE_CACHE_SECONDS: '0' });
const bare = await bareNode();
const accel = await listen({ LECTERN_SERVE_X_ACCEL: '/_lectern_files/' });
const nginx = await startNginx(accel.port);
const results: Result[] = [];
try {
  results.push(await wrk('nginx', `http://127.0.0.1:${nginx.port}/${prefix}/${PAGE}`));
  results.push(await wrk('lectern', `http://127.0.0.1:${lectern.port}/docs/bench/en/latest/${PAGE}`));
  results.push(await wrk('lectern-gzip', `http://127.0.0.1:${lectern.port}/docs/bench/en/latest/${PAGE}`, { 'accept-encoding': 'gzip' }));
  await prisma.project.update({ where: { id: project.id }, data: { addonsEnabled: false } });
  // Written straight to the database: tell the apps, as the domain's own writes do.
  events.emit('servedChanged', {});
  results.push(await wrk('lectern-plain', `http://127.0.0.1:${lectern.port}/docs/bench/en/latest/${PAGE}`));
  results.push(await wrk('nginx+x-accel', `http://127.0.0.1:${nginx.proxyPort}/docs/bench/en/latest/${PAGE}`));
  results.push(await wrk('lectern-nocache', `http://127.0.0.1:${nocache.port}/docs/bench/en/latest/${PAGE}`));
  results.push(await wrk('node-bare', `http://127.0.0.1:${bare.port}/`));
} finally {
  nginx.stop();
  await lectern.close();
  await nocache.close();
  await bare.close();
  await accel.close();
  await db.close();
  await stop();
}

const base = results[0]!.rps;
const bareRps = results.find((r) => r.name === 'node-bare')!.rps;
console.log(`\none ${pageBytes}-byte page, wrk -t2 -c50 -d${seconds}s, ${os.cpus().length} cores (shared with wrk)`);
for (const r of results) {
  console.log(
    `${r.name.padEnd(15)} ${r.rps.toFixed(0).padStart(8)} req/s  ${r.latency.padEnd(26)} ${(r.rps / base).toFixed(3)} of nginx  ${(r.rps / bareRps).toFixed(3)} of node-bare${r.non2xx ? `  (${r.non2xx} non-2xx!)` : ''}`,
  );
}
