// Benchmark (not a test): does the server stay responsive while the heaviest GraphQL operation the
// limits allow runs? Issue 9 (6): 10,000 aliased `project(slug:)` lookups stalled /healthz for 18 s
// on the embedded database. Target: /healthz and a docs page keep p99 under 100 ms.
//
// For each database (embedded PGlite, then a real PostgreSQL), one run seeds projects and publishes
// a docs page, starts the real server (`lectern serve` in a child process, no build worker), and
// measures /healthz and the docs page with one probe client (a request every PROBE_MS, one at a
// time, for a bounded number of rounds):
//   idle       nothing else running
//   aliases    CLIENTS clients each sending, again and again, the most aliased root lookups the cost
//              limit accepts (`a0: project(slug:) { slug } a1: …`)
//   nested     the same with lookups nested in pages (`projects(limit: 100) { nodes { version(slug:) } }` × n)
//   refused    10,000 aliased lookups, which the cost limit refuses before running any
// and prints p50/p99 of each probe, the ratio of p99 to the idle p99, and how many heavy operations
// completed (with their mean time).
// Run: npx tsx test/bench/responsive.ts [seconds-per-scenario] [clients] [embedded|postgres (default: both)]
// First: the app runs as `lectern serve` runs it, in production mode (src/bin.js).
import './production-mode.ts';

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase } from '../../src/db/database.ts';
import { artifactPrefix } from '../../src/storage/artifacts.ts';
import { openStorage } from '../../src/storage/index.ts';
import { freePort } from '../helpers/net.ts';
import { startPostgres, withDatabase } from '../setup/postgres.ts';

const seconds = Number(process.argv[2] ?? 8);
const CLIENTS = Number(process.argv[3] ?? 4);
const PROJECTS = 200;
const PROBE_MS = 10;
const MAX_COMPLEXITY = 20_000; // the default of LECTERN_GRAPHQL_MAX_COMPLEXITY
const ROOT = path.resolve(import.meta.dirname, '../..');

/** The most `project(slug:) { slug }` aliases under the limit: each costs 100 (a root field) + 1 (slug). */
const ALIASES = Math.floor(MAX_COMPLEXITY / 101);
const slugOf = (i: number) => `p${String(i % PROJECTS).padStart(3, '0')}`;
const aliasQuery = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: project(slug: "${slugOf(i)}") { slug }`).join(' ')} }`;
/** A root page of 100 projects, each looking up one version: 100 + 100 × (10 + 1) = 1200. */
const NESTED = Math.floor(MAX_COMPLEXITY / 1200);
const nestedQuery = `{ ${Array.from({ length: NESTED }, (_, i) => `n${i}: projects(limit: 100, offset: ${(i * 7) % PROJECTS}) { nodes { version(slug: "latest") { slug } } }`).join(' ')} }`;

interface Scenario {
  name: string;
  query?: string;
  expectRefused?: boolean;
}
const SCENARIOS: Scenario[] = [
  { name: 'idle' },
  { name: `aliases (${ALIASES} lookups)`, query: aliasQuery(ALIASES) },
  { name: `nested (${NESTED} pages × 100 lookups)`, query: nestedQuery },
  { name: 'refused (10000 lookups)', query: aliasQuery(10_000), expectRefused: true },
];

async function seed(dataDir: string, databaseUrl: string | undefined, storageUrl: string): Promise<void> {
  const db = await openDatabase({ dataDir, databaseUrl });
  try {
    const prisma = db.prisma;
    await prisma.project.createMany({
      data: Array.from({ length: PROJECTS }, (_, i) => ({ name: slugOf(i), slug: slugOf(i), repositoryUrl: `https://example.com/${slugOf(i)}.git` })),
    });
    const projects = await prisma.project.findMany({ select: { id: true } });
    await prisma.version.createMany({ data: projects.map((p) => ({ projectId: p.id, slug: 'latest', verboseName: 'latest', active: true, machine: true })) });
    // One docs page, published as the pipeline's step 5 does: files first, then the version points at the build.
    const html = path.join(dataDir, '..', 'html');
    await mkdir(path.join(html, 'guide'), { recursive: true });
    await writeFile(path.join(html, 'index.html'), '<!doctype html><html><head><title>Bench</title></head><body><h1>Bench</h1></body></html>');
    await writeFile(
      path.join(html, 'guide', 'install.html'),
      `<!doctype html><html><head><title>Install</title></head><body>${'<p>Install it.</p>'.repeat(200)}</body></html>`,
    );
    const project = await prisma.project.findUniqueOrThrow({ where: { slug: slugOf(0) } });
    const version = await prisma.version.findFirstOrThrow({ where: { projectId: project.id, slug: 'latest' } });
    const build = await prisma.build.create({
      data: { projectId: project.id, versionId: version.id, versionSlug: 'latest', state: 'finished', success: true, finishedAt: new Date() },
    });
    await openStorage(storageUrl).putDirectory(html, artifactPrefix(project.slug, 'latest', build.id, 'html'));
    await prisma.version.update({ where: { id: version.id }, data: { publishedBuildId: build.id, lastBuildId: build.id, built: true } });
  } finally {
    await db.close();
  }
}

async function startServer(env: Record<string, string>): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(ROOT, 'src/bin.js'), 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ...env, HOST: '127.0.0.1', PORT: String(port), LECTERN_BUILD_CONCURRENCY: '0', LECTERN_LOG_LEVEL: 'warn', NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`lectern serve exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) return { base, child };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('lectern serve did not start');
}

async function stopServer(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

interface Row {
  db: string;
  scenario: string;
  healthz: { p50: number; p99: number; max: number };
  docs: { p50: number; p99: number; max: number };
  heavy: { done: number; refused: number; meanMs: number };
}

/**
 * GET `url`, its body read, following redirects. A docs origin `<project>.localhost` (where `serve`
 * without a docs domain sends docs) is reached at 127.0.0.1 with its Host header, as browsers
 * resolve every `*.localhost` name; this machine's resolver does not.
 */
function get(url: string, redirects = 3): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: u.port, path: `${u.pathname}${u.search}`, headers: { host: u.host } }, (res) => {
      res.resume();
      res.on('error', reject);
      res.on('end', () => {
        const location = res.headers.location;
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && location && redirects > 0) resolve(get(new URL(location, url).href, redirects - 1));
        else resolve(status);
      });
    });
    req.on('error', reject);
  });
}

async function timed(url: string): Promise<number> {
  const start = performance.now();
  const status = await get(url);
  if (status !== 200) throw new Error(`${url} answered ${status}`);
  return performance.now() - start;
}

async function runScenario(db: string, base: string, s: Scenario): Promise<Row> {
  let running = true;
  const heavy = { done: 0, refused: 0, totalMs: 0 };
  const clients = s.query
    ? Array.from({ length: CLIENTS }, async () => {
        const body = JSON.stringify({ query: s.query });
        while (running) {
          const start = performance.now();
          const res = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body });
          const json = (await res.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
          const refused = json.errors?.[0]?.extensions?.code === 'QUERY_TOO_COSTLY';
          if (refused !== !!s.expectRefused) throw new Error(`${s.name}: unexpected answer ${JSON.stringify(json).slice(0, 300)}`);
          if (refused) heavy.refused++;
          else heavy.done++;
          heavy.totalMs += performance.now() - start;
        }
      })
    : [];
  // Let the heavy clients get going before probing.
  if (s.query) await new Promise((r) => setTimeout(r, 500));
  const healthz: number[] = [];
  const docs: number[] = [];
  const rounds = Math.round((seconds * 1000) / (2 * PROBE_MS));
  for (let i = 0; i < rounds; i++) {
    healthz.push(await timed(`${base}/healthz`));
    docs.push(await timed(`${base}/docs/${slugOf(0)}/en/latest/guide/install.html`));
    await new Promise((r) => setTimeout(r, PROBE_MS));
  }
  running = false;
  await Promise.all(clients);
  const stats = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1]! };
  };
  const n = heavy.done + heavy.refused;
  return {
    db,
    scenario: s.name,
    healthz: stats(healthz),
    docs: stats(docs),
    heavy: { done: heavy.done, refused: heavy.refused, meanMs: n ? heavy.totalMs / n : 0 },
  };
}

async function runDatabase(db: 'embedded' | 'postgres', databaseUrl: string | undefined): Promise<Row[]> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'lectern-responsive-'));
  try {
    const dataDir = path.join(work, 'data');
    const storage = `file:${path.join(work, 'storage')}`;
    await seed(dataDir, databaseUrl, storage);
    const env: Record<string, string> = { LECTERN_DATA_DIR: dataDir, LECTERN_STORAGE: storage, LECTERN_SECRET_KEY: 'bench-secret-key-0123456789abcdef012345' };
    if (databaseUrl) env.DATABASE_URL = databaseUrl;
    const { base, child } = await startServer(env);
    try {
      const rows: Row[] = [];
      for (const s of SCENARIOS) {
        const row = await runScenario(db, base, s);
        rows.push(row);
        console.error(`[${db}] ${s.name}: healthz p99 ${row.healthz.p99.toFixed(1)} ms, docs p99 ${row.docs.p99.toFixed(1)} ms`);
      }
      return rows;
    } finally {
      await stopServer(child);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

const only = process.argv[4];
const rows: Row[] = [];
if (only !== 'postgres') rows.push(...(await runDatabase('embedded', undefined)));
const { adminUrl, stop } = only === 'embedded' ? { adminUrl: '', stop: async () => {} } : await startPostgres();
if (only !== 'embedded')
  try {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query('DROP DATABASE IF EXISTS lectern_responsive_bench');
    await admin.query('CREATE DATABASE lectern_responsive_bench');
    await admin.end();
    rows.push(...(await runDatabase('postgres', withDatabase(adminUrl, 'lectern_responsive_bench'))));
  } finally {
    await stop();
  }

const ms = (x: number) => x.toFixed(1).padStart(7);
console.log(`\n${CLIENTS} heavy clients, probes every ${PROBE_MS} ms for ${seconds} s per scenario; latency in ms; ×idle = p99 / idle p99\n`);
console.log(
  `${'database'.padEnd(9)} ${'scenario'.padEnd(34)} ${'healthz p50'.padStart(11)} ${'p99'.padStart(7)} ${'max'.padStart(7)} ${'×idle'.padStart(6)}  ${'docs p50'.padStart(8)} ${'p99'.padStart(7)} ${'max'.padStart(7)} ${'×idle'.padStart(6)}  heavy ops (mean ms)`,
);
for (const r of rows) {
  const idle = rows.find((x) => x.db === r.db && x.scenario === 'idle')!;
  const ops = r.heavy.done + r.heavy.refused ? `${r.heavy.done} run, ${r.heavy.refused} refused (${r.heavy.meanMs.toFixed(0)})` : '-';
  console.log(
    `${r.db.padEnd(9)} ${r.scenario.padEnd(34)} ${ms(r.healthz.p50).padStart(11)} ${ms(r.healthz.p99)} ${ms(r.healthz.max)} ${(r.healthz.p99 / idle.healthz.p99).toFixed(1).padStart(6)}  ${ms(r.docs.p50).padStart(8)} ${ms(r.docs.p99)} ${ms(r.docs.max)} ${(r.docs.p99 / idle.docs.p99).toFixed(1).padStart(6)}  ${ops}`,
  );
}
const worst = Math.max(...rows.map((r) => Math.max(r.healthz.p99, r.docs.p99)));
console.log(`\nworst p99: ${worst.toFixed(1)} ms (target: under 100 ms)`);
