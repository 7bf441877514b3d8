// Benchmark (not a test): Read the Docs' addons API, `GET <docs root>/_/addons/?api-version=1&
// project-slug=&version-slug=`, which every served page's script now asks (docs/design/addons.md).
// A project with 100 active, built versions (each with a finished build) and 10 translations, on
// the embedded database and on a real PostgreSQL, served by a listening Lectern (production mode,
// as `lectern serve`), asked one request at a time over a kept-alive connection, in interleaved
// rounds of:
//   cached     an anonymous reader: the answer kept per page, as the docs server keeps its rows
//   uncached   the same with LECTERN_SERVE_CACHE_SECONDS=0: every request reads the database
//   signed-in  a maintainer's token: answers to signed-in readers are made each time
// and prints p50 and p99 of each, and the ratios to `cached`. Target: p50 ≤ 10 ms.
// Run: npx tsx test/bench/addons.ts [requests-per-round] [rounds]
// First: the app runs as `lectern serve` runs it, in production mode (src/bin.js).
import './production-mode.ts';

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { LANGUAGES } from '../../src/domain/choices.ts';
import { createToken, createUser } from '../../src/domain/users.ts';
import { createLogger } from '../../src/log.ts';
import { startPostgres, withDatabase } from '../setup/postgres.ts';

const perRound = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 3);
const VERSIONS = 100;
const TRANSLATIONS = 10;

/** The project, its versions with a build each, and its translations. */
async function seed(db: Database): Promise<string> {
  const prisma = db.prisma;
  const user = await createUser(prisma, 'bench', {});
  const project = await prisma.project.create({
    data: { name: 'Bench', slug: 'bench', repositoryUrl: 'https://github.com/acme/bench', users: { connect: { id: user.user.id } } },
  });
  for (let i = 0; i < VERSIONS; i++) {
    const slug = i === 0 ? 'latest' : `v${i}.0`;
    const v = await prisma.version.create({
      data: { projectId: project.id, slug, verboseName: slug, identifier: `tag${i}`, type: i === 0 ? 'branch' : 'tag', active: true, built: true },
    });
    await prisma.build.create({
      data: {
        projectId: project.id,
        versionId: v.id,
        versionSlug: slug,
        state: 'finished',
        success: true,
        commit: 'a1b2c3d4',
        duration: 42,
        finishedAt: new Date(),
      },
    });
  }
  const languages = [...LANGUAGES.keys()].filter((l) => l !== 'en').slice(0, TRANSLATIONS);
  for (const language of languages) {
    const t = await prisma.project.create({
      data: {
        name: `Bench ${language}`,
        slug: `bench-${language.toLowerCase()}`,
        language,
        repositoryUrl: 'https://github.com/acme/bench',
        mainLanguageProjectId: project.id,
      },
    });
    await prisma.version.create({ data: { projectId: t.id, slug: 'latest', verboseName: 'latest', type: 'branch', active: true, built: true } });
  }
  return createToken(prisma, user.user.id);
}

interface Served {
  origin: string;
  server: Server;
}

async function serve(db: Database, dataDir: string, databaseUrl: string | undefined, cacheSeconds: string | undefined): Promise<Served> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const config = loadConfig({
    LECTERN_DATA_DIR: dataDir,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    LECTERN_PUBLIC_URL: origin,
    LECTERN_LOG_LEVEL: 'silent',
    LECTERN_BUILD_CONCURRENCY: '0',
    ...(cacheSeconds ? { LECTERN_SERVE_CACHE_SECONDS: cacheSeconds } : {}),
  });
  const { handler } = buildApp({ config, db, log: createLogger('silent'), secretKey: 'bench-secret-key-0123456789abcdef0123456789' });
  server.on('request', handler);
  return { origin, server };
}

/** Milliseconds each of `n` requests took, one after the other. */
async function times(url: string, headers: Record<string, string>, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await fetch(url, { headers });
    const body = (await res.json()) as { versions?: { active: unknown[] } };
    out.push(performance.now() - t0);
    if (res.status !== 200 || body.versions?.active.length !== VERSIONS) throw new Error(`unexpected answer: ${res.status}`);
  }
  return out;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

async function bench(name: string, db: Database, dataDir: string, databaseUrl?: string): Promise<void> {
  const token = await seed(db);
  const cached = await serve(db, dataDir, databaseUrl, undefined);
  const uncached = await serve(db, dataDir, databaseUrl, '0');
  const query = '/docs/bench/_/addons/?api-version=1&project-slug=bench&version-slug=v50.0';
  const kinds: { kind: string; url: string; headers: Record<string, string> }[] = [
    { kind: 'cached', url: cached.origin + query, headers: {} },
    { kind: 'uncached', url: uncached.origin + query, headers: {} },
    { kind: 'signed-in', url: cached.origin + query, headers: { Authorization: `Token ${token}` } },
  ];
  const samples = new Map<string, number[]>(kinds.map((k) => [k.kind, []]));
  // Warm-up: the first query of each kind compiles Prisma's plans and fills the cache.
  for (const k of kinds) await times(k.url, k.headers, 20);
  for (let r = 0; r < rounds; r++) for (const k of kinds) samples.get(k.kind)!.push(...(await times(k.url, k.headers, perRound)));
  const p50 = (k: string) => quantile(samples.get(k)!, 0.5);
  console.log(`\n${name}: ${VERSIONS} versions, ${TRANSLATIONS} translations, ${rounds} rounds of ${perRound} requests each`);
  console.log('kind        p50 ms   p99 ms   p50 / cached');
  for (const k of kinds) {
    console.log(
      `${k.kind.padEnd(10)}  ${p50(k.kind).toFixed(2).padStart(6)}   ${quantile(samples.get(k.kind)!, 0.99).toFixed(2).padStart(6)}   ${(p50(k.kind) / p50('cached')).toFixed(1)}x`,
    );
  }
  for (const s of [cached, uncached]) s.server.close();
}

const work = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-addons-'));
try {
  const embeddedDir = path.join(work, 'embedded');
  const embedded = await openDatabase({ dataDir: embeddedDir });
  await bench('embedded (PGlite)', embedded, embeddedDir);
  await embedded.close();

  const { adminUrl, stop } = await startPostgres();
  try {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query('DROP DATABASE IF EXISTS lectern_addons_bench');
    await admin.query('CREATE DATABASE lectern_addons_bench');
    await admin.end();
    const databaseUrl = withDatabase(adminUrl, 'lectern_addons_bench');
    const pgDir = path.join(work, 'postgres');
    const postgres = await openDatabase({ dataDir: pgDir, databaseUrl });
    await bench('PostgreSQL', postgres, pgDir, databaseUrl);
    await postgres.close();
  } finally {
    await stop();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
