// Benchmark (not a test): what traffic analytics cost the docs server (docs/design/analytics.md).
// Two apps on one embedded database in one process, each listening on 127.0.0.1, the same
// published page asked by autocannon (10 connections) in alternating rounds:
//   off  LECTERN_ANALYTICS_RETENTION_DAYS=0: no recorder, nothing counted
//   on   the default: every page read counted in memory, written every 5 s
// and prints each round's requests per second, the medians and their ratio (target: on ≥ 95% of
// off), then the views the `on` app wrote, against the 2xx answers it gave.
// Run: npx tsx test/bench/analytics.ts [seconds-per-round] [rounds]
// First: the app runs as `lectern serve` runs it, in production mode (src/bin.js).
import './production-mode.ts';

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createLogger } from '../../src/log.ts';
import { publishHtml } from '../helpers/publish-embed.ts';

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 3);
const work = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-analytics-'));
const html = path.join(work, 'html');
mkdirSync(html);
const body = `<!doctype html><html><head><title>Page</title></head><body>${'<p>Some text of the page.</p>'.repeat(200)}</body></html>`;
writeFileSync(path.join(html, 'index.html'), body);
writeFileSync(path.join(html, 'page.html'), body);

const dataDir = path.join(work, 'data');
const db = await openDatabase({ dataDir });
const log = createLogger('silent');
const secretKey = 'bench-secret-key-0123456789abcdef0123456789';

async function serve(env: Record<string, string>): Promise<{ url: string; server: Server; app: ReturnType<typeof buildApp> }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const config = loadConfig({ LECTERN_DATA_DIR: dataDir, LECTERN_PUBLIC_URL: origin, LECTERN_LOG_LEVEL: 'silent', LECTERN_BUILD_CONCURRENCY: '0', ...env });
  const app = buildApp({ config, db, log, secretKey });
  server.on('request', app.handler);
  return { url: `${origin}/docs/bench/en/latest/page.html`, server, app };
}

const off = await serve({ LECTERN_ANALYTICS_RETENTION_DAYS: '0' });
const on = await serve({});
const project = await db.prisma.project.create({ data: { name: 'Bench', slug: 'bench', repositoryUrl: 'https://github.com/acme/bench' } });
await db.prisma.version.create({ data: { projectId: project.id, slug: 'latest', verboseName: 'latest', type: 'branch', active: true } });
await publishHtml(on.app.services, { project: 'bench', version: 'latest', htmlDir: html });

const rates: Record<'off' | 'on', number[]> = { off: [], on: [] };
let answeredOn = 0;
async function load(name: 'off' | 'on', url: string, duration: number): Promise<number> {
  const r = await autocannon({ url, connections: 10, duration });
  if (r.non2xx || r.errors) throw new Error(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  if (name === 'on' && duration === seconds) answeredOn += r['2xx'];
  return r.requests.average;
}
// Warm-up: caches, the fast path, Prisma's first queries; not counted.
for (const [name, s] of [['off', off] as const, ['on', on] as const]) await load(name, s.url, 2);
await on.app.services.analytics!.flush();
await db.prisma.pageViewDaily.deleteMany();
console.log(`a ${Math.round(body.length / 1024)} KB page, ${rounds} rounds of ${seconds} s each way, alternating`);
for (let i = 0; i < rounds; i++) {
  const order = i % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
  for (const name of order) {
    const rate = await load(name, (name === 'on' ? on : off).url, seconds);
    rates[name].push(rate);
    console.log(`round ${i + 1} ${name.padEnd(3)} ${rate.toFixed(0)} req/s`);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `median: off ${median(rates.off).toFixed(0)} req/s, on ${median(rates.on).toFixed(0)} req/s: on/off ${(median(rates.on) / median(rates.off)).toFixed(3)}`,
);
await on.app.services.analytics!.flush();
const written = await db.prisma.pageViewDaily.aggregate({ _sum: { views: true } });
console.log(`the 'on' app answered ${answeredOn} pages in its timed rounds and wrote ${written._sum.views ?? 0} views`);
for (const s of [off, on]) s.server.close();
await on.app.services.analytics!.close();
await db.close();
rmSync(work, { recursive: true, force: true });
