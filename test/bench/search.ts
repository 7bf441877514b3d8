// Search on a real corpus (issue 13): Debian's python3-doc (the Python documentation as Sphinx
// HTML, with its objects.inv) published as a version, on PostgreSQL and on the embedded database,
// side by side in one run:
// - indexing: pages per second, and the time indexing adds to publishing, as a ratio of the
//   publish and of a Sphinx build of the test fixture (built here, then indexed);
// - query latency, p50 and p99 of 50 queries (words, phrases, prefixes, dotted names), each run 5 times;
// - relevance: 25 queries with the page a reader wants, first and in the top 3;
// - index size on disk per MB of HTML indexed.
//
//   apt-get install python3-doc && npx tsx test/bench/search.ts
import './production-mode.ts';

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { publishBuild } from '../../src/builds/publish.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { createEvents } from '../../src/events.ts';
import { indexBuild, searchPages } from '../../src/search/index.ts';
import { FileStorage } from '../../src/storage/file.ts';
import { sphinxBuild } from '../helpers/publish.ts';
import { startPostgres, withDatabase } from '../setup/postgres.ts';

const CORPUS = '/usr/share/doc/python3-doc/html';
if (!existsSync(CORPUS)) {
  console.error(`${CORPUS} is missing: install Debian's python3-doc (apt-get install -y python3-doc)`);
  process.exit(2);
}

/** A query and the page a reader wants from it. */
const RELEVANCE: [string, string][] = [
  ['json.dumps', 'library/json.html'],
  ['asyncio gather', 'library/asyncio-task.html'],
  ['list comprehension', 'tutorial/datastructures.html'],
  ['os.path.join', 'library/os.path.html'],
  ['subprocess.run', 'library/subprocess.html'],
  ['dataclass', 'library/dataclasses.html'],
  ['re.sub', 'library/re.html'],
  ['collections.Counter', 'library/collections.html'],
  ['itertools.groupby', 'library/itertools.html'],
  ['datetime.strptime', 'library/datetime.html'],
  ['pathlib.Path', 'library/pathlib.html'],
  ['argparse add_argument', 'library/argparse.html'],
  ['logging.basicConfig', 'library/logging.html'],
  ['unittest.mock patch', 'library/unittest.mock.html'],
  ['typing.Optional', 'library/typing.html'],
  ['functools.lru_cache', 'library/functools.html'],
  ['venv virtual environment', 'library/venv.html'],
  ['sqlite3.connect', 'library/sqlite3.html'],
  ['threading.Lock', 'library/threading.html'],
  ['csv.reader', 'library/csv.html'],
  ['random.choice', 'library/random.html'],
  ['str.split', 'library/stdtypes.html'],
  ['handling exceptions', 'tutorial/errors.html'],
  ['with statement', 'reference/compound_stmts.html'],
  ['shutil.copytree', 'library/shutil.html'],
];
const OTHERS = [
  'dict',
  'iterat',
  'gen',
  'asyn',
  'unicode',
  'socket',
  'thread',
  'pickle',
  'regular expression',
  'http server',
  'decorator',
  'generator expression',
  'contextmanager',
  'f-string',
  'bytes decode',
  'tuple',
  'lambda',
  'closure',
  'import system',
  'hashlib.sha256',
  'zip',
  'enumerate',
  'sort key',
  'heapq',
  'bisect',
];
const QUERIES = [...RELEVANCE.map(([q]) => q), ...OTHERS];
const RUNS = 5;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
function bytesOf(dir: string, filter: (f: string) => boolean): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const f = path.join(e.parentPath, e.name);
    if (e.isFile() && filter(f)) n += statSync(f).size;
  }
  return n;
}

// The corpus, its links resolved (a build's output may hold no symbolic link).
const corpus = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-pydoc-'));
execFileSync('cp', ['-rL', `${realpathSync(CORPUS)}/.`, corpus]);
const htmlBytes = bytesOf(corpus, (f) => f.endsWith('.html'));

// A Sphinx build of the tests' fixture, timed, to compare indexing with.
const sphinxStart = performance.now();
const fixture = await sphinxBuild('sphinx');
const sphinxMs = performance.now() - sphinxStart;

async function measure(kind: 'postgres' | 'embedded', db: Database) {
  const prisma = db.prisma;
  const storageDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-search-storage-'));
  const storage = new FileStorage(storageDir);
  const out: Record<string, unknown> = { database: kind };
  const publishOne = async (slug: string, html: string) => {
    const project = await prisma.project.create({ data: { name: slug, slug, repositoryUrl: `https://example.com/${slug}.git` } });
    const version = await prisma.version.create({ data: { projectId: project.id, slug: 'latest', verboseName: 'latest', type: 'branch', active: true } });
    const build = await prisma.build.create({
      data: { projectId: project.id, versionId: version.id, versionSlug: 'latest', state: 'finished', success: true },
    });
    const start = performance.now();
    await publishBuild(
      { prisma, storage, events: createEvents() },
      { projectSlug: slug, version: { id: version.id, slug: 'latest' }, buildId: build.id, htmlDir: html },
    );
    const publishMs = performance.now() - start;
    // Indexing again alone: what it adds to a publish.
    const indexStart = performance.now();
    const index = await indexBuild(prisma, storage, {
      projectId: project.id,
      versionId: version.id,
      buildId: build.id,
      language: 'en',
      htmlPrefix: `projects/${slug}/latest/${build.id}/html`,
    });
    return { versionId: version.id, publishMs, indexMs: performance.now() - indexStart, index };
  };

  const fx = await publishOne('fixture', fixture);
  out.fixture = { sphinxBuildMs: Math.round(sphinxMs), indexMs: Math.round(fx.indexMs), ratioToSphinx: fx.indexMs / sphinxMs };
  const py = await publishOne('python', corpus);
  out.python = {
    pages: py.index.pages,
    sections: py.index.sections,
    skipped: py.index.skipped.length,
    publishMs: Math.round(py.publishMs),
    indexMs: Math.round(py.indexMs),
    pagesPerSecond: Math.round(py.index.pages / (py.indexMs / 1000)),
    indexShareOfPublish: py.indexMs / py.publishMs,
  };

  const search = (q: string, limit = 10) => searchPages(prisma, { query: q, versionIds: [py.versionId], languages: ['en'], limit, offset: 0 });
  for (const q of QUERIES.slice(0, 5)) await search(q); // warm-up
  const times: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    for (const q of QUERIES) {
      const t0 = performance.now();
      await search(q);
      times.push(performance.now() - t0);
    }
  }
  out.latency = { queries: QUERIES.length, runs: RUNS, p50: +pct(times, 50).toFixed(1), p99: +pct(times, 99).toFixed(1), max: +Math.max(...times).toFixed(1) };

  let first = 0;
  let top3 = 0;
  const notFirst: string[] = [];
  for (const [q, want] of RELEVANCE) {
    const paths = (await search(q, 3)).pages.map((p) => p.path);
    if (paths[0] === want) first++;
    else notFirst.push(`${q} → ${paths.join(', ') || 'nothing'} (wanted ${want})`);
    if (paths.includes(want)) top3++;
  }
  out.relevance = { queries: RELEVANCE.length, first, top3, notFirst };

  const [size] = await prisma.$queryRaw<{ bytes: bigint }[]>`SELECT pg_total_relation_size('"SearchSection"') AS bytes`;
  const indexBytes = Number(size?.bytes ?? 0);
  out.size = { htmlMB: +(htmlBytes / 1e6).toFixed(1), indexMB: +(indexBytes / 1e6).toFixed(1), indexMBPerHtmlMB: +(indexBytes / htmlBytes).toFixed(2) };
  rmSync(storageDir, { recursive: true, force: true });
  return out;
}

const results: Record<string, unknown>[] = [];
// LECTERN_BENCH_DATABASES=postgres (or embedded) runs one of the two.
const only = process.env.LECTERN_BENCH_DATABASES;
if (!only || only === 'postgres') {
  const { adminUrl, stop } = await startPostgres();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS lectern_bench_search');
  await admin.query('CREATE DATABASE lectern_bench_search');
  await admin.end();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-search-pg-'));
  const db = await openDatabase({ dataDir, databaseUrl: withDatabase(adminUrl, 'lectern_bench_search') });
  results.push(await measure('postgres', db));
  await db.close();
  await stop();
  rmSync(dataDir, { recursive: true, force: true });
}
if (!only || only === 'embedded') {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-search-embedded-'));
  const db = await openDatabase({ dataDir });
  results.push(await measure('embedded', db));
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
}
rmSync(corpus, { recursive: true, force: true });
console.log(JSON.stringify(results, null, 2));
