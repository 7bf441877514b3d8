// Benchmark (not a test): what uploading built docs costs next to unpacking the same archive with
// tar. One run makes an archive of Debian's python3-doc HTML, copied N times (copy0/, copy1/, …)
// until the unpacked tree is about TARGET MB, starts Lectern (a real listening server, in this
// process, no build worker) and, for R rounds, alternating which goes first:
//   tar -x    `tar -xzf archive -C <new empty dir>` on the disk of Lectern's data dir, wall clock,
//             peak RSS by /usr/bin/time -f %M (or /proc/<pid>/status VmHWM polled when it is missing)
//   upload    POST /api/v3/projects/bench/versions/v<r>/upload/ with the archive as the body, sent by
//             curl (its memory is not this process's), from curl's start to the 201 answer; Lectern's
//             peak memory is this process's RSS sampled every 20 ms minus its RSS just before (and
//             the kernel's VmHWM, reset before each upload, as a check)
// Each round publishes a new version (a full publish: spool, unpack and check, store, switch,
// index for search). It prints a per-round table, with where the upload's time went (phases seen
// from outside: the unpack directory appearing, the storage's putDirectory, its first list by the
// search indexer), and a summary: median seconds, MB/s of the archive and of the unpacked bytes,
// peak memory, and the ratio upload / tar -x. MB is 10^6 bytes.
// Database: embedded PGlite by default; LECTERN_BENCH_DATABASES=postgres (as test/bench/search.ts)
// uses a real PostgreSQL (test/setup/postgres.ts: LECTERN_TEST_DATABASE_URL, or a throwaway cluster).
// Storage: file: under the data dir, or LECTERN_STORAGE when set.
//
//   apt-get install python3-doc curl && npx tsx test/bench/upload.ts [target-MB=500] [rounds=3] [tar.gz|tar]
// First: the app runs as `lectern serve` runs it, in production mode (src/bin.js).
import './production-mode.ts';

import { execFileSync, spawn } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import pg from 'pg';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { createUser } from '../../src/domain/users.ts';
import { createLogger } from '../../src/log.ts';
import { fileStorageDir, openStorage, type Storage } from '../../src/storage/index.ts';
import { uploadsDir } from '../../src/uploads/upload-docs.ts';
import { startPostgres, withDatabase } from '../setup/postgres.ts';

const CORPUS = '/usr/share/doc/python3-doc/html';
const MB = 1e6;
const GiB = 1024 ** 3;
const SAMPLE_MS = 20;

const usage = 'usage: npx tsx test/bench/upload.ts [target-MB=500] [rounds=3] [tar.gz|tar]';
const TARGET_MB = Number(process.argv[2] ?? 500);
const ROUNDS = Number(process.argv[3] ?? 3);
const FORMAT = process.argv[4] ?? 'tar.gz';
if (!(TARGET_MB > 0) || !Number.isInteger(ROUNDS) || ROUNDS < 1 || (FORMAT !== 'tar.gz' && FORMAT !== 'tar')) {
  console.error(usage);
  process.exit(2);
}
const DB_KIND = process.env.LECTERN_BENCH_DATABASES ?? process.env.LECTERN_TEST_DB ?? 'embedded';
if (DB_KIND !== 'embedded' && DB_KIND !== 'postgres') {
  console.error(`LECTERN_BENCH_DATABASES must be embedded or postgres (one of them), not ${DB_KIND}`);
  process.exit(2);
}
if (!existsSync(CORPUS)) {
  console.error(`${CORPUS} is missing: install Debian's python3-doc (apt-get install -y python3-doc)`);
  process.exit(2);
}
const has = (cmd: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
};
if (!has('curl')) {
  console.error('curl is missing (apt-get install -y curl): the upload is sent by curl, so that the client is not in the measured process');
  process.exit(2);
}
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

const envShown = ['LECTERN_BENCH_DATABASES', 'LECTERN_TEST_DB', 'LECTERN_TEST_DATABASE_URL', 'LECTERN_STORAGE']
  .filter((k) => process.env[k] !== undefined)
  .map((k) => `${k}=${k === 'LECTERN_TEST_DATABASE_URL' ? '…' : process.env[k]}`);
const COMMAND = [...envShown, 'npx tsx', path.relative(process.cwd(), process.argv[1]!), ...process.argv.slice(2)].join(' ');

// Everything made is removed at the end, on failure and on Ctrl-C too, last made first.
const cleanups: (() => unknown)[] = [];
let cleaning: Promise<void> | undefined;
const cleanup = () =>
  (cleaning ??= (async () => {
    while (cleanups.length) {
      try {
        await cleanups.pop()!();
      } catch (e) {
        console.error('cleanup:', e);
      }
    }
  })());
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanup().finally(() => process.exit(130)));

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const fmt = (n: number, digits = 2) => n.toFixed(digits);
const mb = (bytes: number, digits = 1) => (bytes / MB).toFixed(digits);

/** Free bytes on the filesystem holding `dir`, as df says. */
function freeBytes(dir: string): number {
  const lines = execFileSync('df', ['-Pk', dir], { encoding: 'utf8' }).trim().split('\n');
  return Number(lines[lines.length - 1]!.split(/\s+/)[3]) * 1024;
}

/** Regular files below `dir` and their bytes. */
function treeSize(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    files++;
    bytes += statSync(path.join(e.parentPath, e.name)).size;
  }
  return { files, bytes };
}

/** Runs a command to its end without blocking the event loop (the server answers in this process). */
function run(cmd: string, args: string[], onSpawn?: (pid: number) => void): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    if (child.pid !== undefined) onSpawn?.(child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve({ stdout, stderr }) : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}: ${stderr.trim()}`)),
    );
  });
}

/** VmHWM (peak RSS) or VmRSS of a process, in bytes, from /proc. */
function procKb(pid: number | 'self', field: 'VmHWM' | 'VmRSS'): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

try {
  const started = performance.now();
  const work = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-upload-work-'));
  cleanups.push(() => rmSync(work, { recursive: true, force: true }));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-upload-data-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));

  // 1. The archive: the corpus (its links resolved: an upload may hold none) copied until the tree is about TARGET_MB.
  const corpusBytes = Number(execFileSync('du', ['-sbL', realpathSync(CORPUS)], { encoding: 'utf8' }).split(/\s+/)[0]);
  const copies = Math.max(1, Math.round((TARGET_MB * MB) / corpusBytes));
  const treeBytes = copies * corpusBytes;
  // The tree, the archive (and Lectern's spool of it), one unpacked copy at a time (tar's or
  // Lectern's), and one stored copy per round (each version stays published).
  const needBytes = treeBytes * (3 + ROUNDS);
  const free = freeBytes(work);
  if (free < needBytes) {
    throw new Error(
      `not enough free disk in ${os.tmpdir()}: ${mb(free, 0)} MB free, about ${mb(needBytes, 0)} MB needed ` +
        `(${copies} cop${copies === 1 ? 'y' : 'ies'} of ${mb(corpusBytes)} MB × (3 + ${ROUNDS} rounds)); ask for fewer MB or rounds, or set TMPDIR to a larger disk`,
    );
  }
  console.error(`making the tree: ${copies} × ${CORPUS} (${mb(corpusBytes)} MB each) …`);
  const tree = path.join(work, 'tree');
  mkdirSync(path.join(tree, 'copy0'), { recursive: true });
  execFileSync('cp', ['-rL', `${realpathSync(CORPUS)}/.`, path.join(tree, 'copy0')]);
  for (let i = 1; i < copies; i++) execFileSync('cp', ['-r', path.join(tree, 'copy0'), path.join(tree, `copy${i}`)]);
  const unpacked = treeSize(tree);
  const archive = path.join(work, `docs.${FORMAT}`);
  console.error(`making ${path.basename(archive)} …`);
  const archiveStart = performance.now();
  const names = Array.from({ length: copies }, (_, i) => `copy${i}`);
  execFileSync('tar', [FORMAT === 'tar.gz' ? '-czf' : '-cf', archive, '-C', tree, ...names]);
  const archiveMs = performance.now() - archiveStart;
  const archiveBytes = statSync(archive).size;
  let tarStreamBytes = archiveBytes;
  if (FORMAT === 'tar.gz') {
    tarStreamBytes = 0;
    await pipeline(
      createReadStream(archive),
      createGunzip(),
      new Writable({
        write: (chunk: Buffer, _enc, done) => {
          tarStreamBytes += chunk.length;
          done();
        },
      }),
    );
  }
  // A tiny archive of one page, uploaded once before the rounds (the route, Prisma and the JIT warmed).
  const warmArchive = path.join(work, `warm.${FORMAT}`);
  execFileSync('tar', [FORMAT === 'tar.gz' ? '-czf' : '-cf', warmArchive, '-C', path.join(tree, 'copy0'), 'index.html']);
  // The tree is no longer needed: its room goes to the rounds.
  rmSync(tree, { recursive: true, force: true });

  // 2. Lectern, listening on 127.0.0.1, as servedTestApp (test/helpers/app.ts) starts it; that
  // helper itself reads vitest's provided templates, which only exist under vitest.
  let db: Database;
  let dbShown: string;
  if (DB_KIND === 'postgres') {
    const { adminUrl, stop } = await startPostgres();
    cleanups.push(stop);
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query('DROP DATABASE IF EXISTS lectern_bench_upload');
    await admin.query('CREATE DATABASE lectern_bench_upload');
    const [{ server_version: version }] = (await admin.query('SHOW server_version')).rows;
    await admin.end();
    cleanups.push(async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query('DROP DATABASE IF EXISTS lectern_bench_upload WITH (FORCE)');
      await c.end();
    });
    db = await openDatabase({ dataDir, databaseUrl: withDatabase(adminUrl, 'lectern_bench_upload') });
    dbShown = `postgres ${version} (${process.env.LECTERN_TEST_DATABASE_URL ? 'LECTERN_TEST_DATABASE_URL' : 'a throwaway cluster, test/setup/postgres.ts'})`;
  } else {
    db = await openDatabase({ dataDir });
    dbShown = 'embedded (PGlite, in this process)';
  }
  cleanups.push(() => db.close());

  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => (handler ? handler(req, res) : res.writeHead(503).end()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const config = loadConfig({
    LECTERN_DATA_DIR: dataDir,
    LECTERN_PUBLIC_URL: origin,
    LECTERN_LOG_LEVEL: 'warn',
    LECTERN_API_THROTTLE: '0',
    LECTERN_BUILD_CONCURRENCY: '0',
    LECTERN_UPLOAD_MAX_BYTES: String(4 * GiB),
    LECTERN_BUILD_MAX_PUBLISH_BYTES: String(4 * GiB),
    LECTERN_BUILD_MAX_PUBLISH_FILES: '1000000',
    LECTERN_UPLOAD_MAX_RATIO: '1000',
    ...(process.env.LECTERN_STORAGE ? { LECTERN_STORAGE: process.env.LECTERN_STORAGE } : {}),
  });

  // The storage the app is given, seen from outside: when the unpacked files start going up
  // (putDirectory), when that ends, and when the search indexer first lists them.
  const marks: { putStart?: number; putEnd?: number; indexStart?: number; lastGet?: number } = {};
  const inner = openStorage(config.storage);
  const storage = new Proxy(inner, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      if (prop === 'putDirectory') {
        return async (...args: unknown[]) => {
          marks.putStart ??= performance.now();
          try {
            return await value.apply(target, args);
          } finally {
            marks.putEnd = performance.now();
          }
        };
      }
      if (prop === 'list') {
        return (...args: unknown[]) => {
          if (marks.putEnd !== undefined) marks.indexStart ??= performance.now();
          return value.apply(target, args);
        };
      }
      if (prop === 'get') {
        return (...args: unknown[]) => {
          if (marks.indexStart !== undefined) marks.lastGet = performance.now();
          return value.apply(target, args);
        };
      }
      return value.bind(target);
    },
  }) as Storage;
  const fileDir = fileStorageDir(config.storage);
  const storageShown = fileDir ? `file (${fileDir})` : config.storage.split(':')[0]!;
  // What Lectern logs at error level (an upload answers 201 even when its search indexing failed:
  // publish.ts logs it): kept per upload, and shown in one line each.
  const logged: string[] = [];
  const log = createLogger('warn', {
    write: (line: string) => {
      try {
        const { level, msg, err } = JSON.parse(line) as { level: number; msg: string; err?: { message?: string } };
        // Prisma's messages start with the call and a blank line: their last line says what happened.
        const why = err?.message?.trim().split('\n').filter(Boolean).pop()?.trim();
        const shown = `${msg}${why ? `: ${why}` : ''}`;
        if (level >= 50) logged.push(shown);
        console.error(`lectern ${level >= 50 ? 'error' : 'warning'}: ${shown}`);
      } catch {
        console.error(line.trimEnd());
      }
    },
  });
  ({ handler } = buildApp({ config, db, log, secretKey: 'bench-secret-key-0123456789abcdef0123456789', storage }));

  const { token } = await createUser(db.prisma, 'bench');
  const created = await fetch(`${origin}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Token ${token}` },
    body: JSON.stringify({ query: 'mutation { importProject(input: {name: "Bench", uploadOnly: true}) { __typename } }' }),
  });
  const createdBody = (await created.json()) as { data?: unknown; errors?: unknown };
  if (!created.ok || createdBody.errors) throw new Error(`importProject failed (${created.status}): ${JSON.stringify(createdBody)}`);

  // The same disk for both sides: tar's target dirs and the data dir.
  const storageDir = fileDir ?? dataDir;
  mkdirSync(storageDir, { recursive: true });
  const sameDisk = statSync(work).dev === statSync(dataDir).dev && statSync(dataDir).dev === statSync(storageDir).dev;
  const unpackDir = uploadsDir(dataDir);
  const contentType = FORMAT === 'tar.gz' ? 'application/gzip' : 'application/x-tar';

  async function upload(version: string, file: string) {
    for (const k of Object.keys(marks)) delete marks[k as keyof typeof marks];
    logged.length = 0;
    const response = path.join(work, 'response.json');
    let spoolEnd: number | undefined;
    let samples = 0;
    let maxGap = 0;
    // Resetting the kernel's peak RSS (Linux's clear_refs 5), so that VmHWM is this upload's peak.
    let hwmReset = false;
    try {
      writeFileSync('/proc/self/clear_refs', '5');
      hwmReset = true;
    } catch {}
    const baseline = process.memoryUsage.rss();
    let peak = baseline;
    let last = performance.now();
    const sampler = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
      samples++;
      peak = Math.max(peak, process.memoryUsage.rss());
      if (spoolEnd === undefined) {
        try {
          if (readdirSync(unpackDir).some((n) => n.startsWith('unpacked-'))) spoolEnd = now;
        } catch {}
      }
    }, SAMPLE_MS);
    const start = performance.now();
    let out: { stdout: string };
    try {
      out = await run('curl', [
        '-sS',
        '-o',
        response,
        '-w',
        '%{http_code} %{time_total}',
        '-X',
        'POST',
        '-H',
        `Authorization: Token ${token}`,
        '-H',
        `Content-Type: ${contentType}`,
        '-H',
        'Expect:',
        '--data-binary',
        `@${file}`,
        `${origin}/api/v3/projects/bench/versions/${version}/upload/`,
      ]);
    } finally {
      clearInterval(sampler);
    }
    const end = performance.now();
    peak = Math.max(peak, process.memoryUsage.rss());
    const hwm = hwmReset ? procKb('self', 'VmHWM') : null;
    const [status, curlSeconds] = out.stdout.trim().split(' ');
    const body = JSON.parse(readFileSync(response, 'utf8'));
    if (status !== '201' || body.success !== true) throw new Error(`upload of ${version} answered ${status}: ${JSON.stringify(body)}`);
    const at = (t: number | undefined) => (t === undefined ? Number.NaN : (t - start) / 1000);
    // Searchable? The sections the version has in the index now.
    const { id: versionId } = await db.prisma.version.findFirstOrThrow({ where: { slug: version, project: { slug: 'bench' } }, select: { id: true } });
    const sections = await db.prisma.searchSection.count({ where: { versionId } });
    return {
      seconds: (end - start) / 1000,
      curlSeconds: Number(curlSeconds),
      files: body.upload.files as number,
      bytes: Number(body.upload.bytes),
      peakDelta: peak - baseline,
      peakAbs: peak,
      hwmDelta: hwm === null ? null : hwm - baseline,
      samples,
      maxGap,
      phases: {
        spool: at(spoolEnd),
        unpack: at(marks.putStart) - at(spoolEnd),
        store: at(marks.putEnd) - at(marks.putStart),
        switch: at(marks.indexStart) - at(marks.putEnd),
        read: at(marks.lastGet) - at(marks.indexStart),
        write: (end - start) / 1000 - at(marks.lastGet),
      },
      sections,
      errors: [...logged],
    };
  }

  async function tarExtract(round: number) {
    const dest = path.join(work, `tar-x-${round}`);
    mkdirSync(dest);
    const args = [FORMAT === 'tar.gz' ? '-xzf' : '-xf', archive, '-C', dest];
    const timeOut = path.join(work, 'time.out');
    let peak = 0;
    const start = performance.now();
    if (TIME) {
      await run(TIME, ['-f', '%M', '-o', timeOut, 'tar', ...args]);
    } else {
      let pid = 0;
      const poll = setInterval(() => (peak = Math.max(peak, procKb(pid, 'VmHWM') ?? 0)), SAMPLE_MS);
      try {
        await run('tar', args, (p) => (pid = p));
      } finally {
        clearInterval(poll);
      }
    }
    const seconds = (performance.now() - start) / 1000;
    if (TIME) peak = Number(readFileSync(timeOut, 'utf8').trim().split('\n').pop()) * 1024;
    const got = round === 0 ? treeSize(dest) : null;
    rmSync(dest, { recursive: true, force: true });
    return { seconds, peak, got };
  }

  console.error(`archive ready in ${fmt(archiveMs / 1000, 1)} s; Lectern at ${origin}; warm-up upload …`);
  await upload('warmup', warmArchive);

  const rounds: { order: string; tar: Awaited<ReturnType<typeof tarExtract>>; up: Awaited<ReturnType<typeof upload>> }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const tarFirst = r % 2 === 0;
    let tar: Awaited<ReturnType<typeof tarExtract>> | undefined;
    let up: Awaited<ReturnType<typeof upload>> | undefined;
    for (const side of tarFirst ? ['tar', 'upload'] : ['upload', 'tar']) {
      // What the previous step wrote goes to disk first, not during this one.
      execFileSync('sync');
      if (side === 'tar') tar = await tarExtract(r);
      else up = await upload(`v${r}`, archive);
    }
    if (tar!.got && (tar!.got.files !== unpacked.files || tar!.got.bytes !== unpacked.bytes))
      throw new Error(`tar -x unpacked ${tar!.got.files} files, ${tar!.got.bytes} bytes; the tree held ${unpacked.files}, ${unpacked.bytes}`);
    if (up!.files !== unpacked.files || up!.bytes !== unpacked.bytes)
      throw new Error(`the upload unpacked ${up!.files} files, ${up!.bytes} bytes; the tree held ${unpacked.files}, ${unpacked.bytes}`);
    rounds.push({ order: tarFirst ? 'tar, upload' : 'upload, tar', tar: tar!, up: up! });
    console.error(`round ${r + 1}/${ROUNDS}: tar -x ${fmt(tar!.seconds)} s, upload ${fmt(up!.seconds)} s`);
  }

  // 3. The tables.
  const tarS = median(rounds.map((r) => r.tar.seconds));
  const upS = median(rounds.map((r) => r.up.seconds));
  const tarPeak = Math.max(...rounds.map((r) => r.tar.peak));
  const upPeak = Math.max(...rounds.map((r) => r.up.peakDelta));
  const hwms = rounds.map((r) => r.up.hwmDelta).filter((h): h is number => h !== null);
  const lines: string[] = [];
  const p = (s = '') => lines.push(s);
  p(`## Upload vs tar -x: ${mb(tarStreamBytes, 0)} MB tar${FORMAT === 'tar.gz' ? ', gzipped' : ''}, ${ROUNDS} round${ROUNDS === 1 ? '' : 's'}`);
  p();
  p(`- command: \`${COMMAND}\` (node ${process.version}, ${os.cpus().length} CPUs, ${fmt(os.totalmem() / GiB, 1)} GiB RAM)`);
  p(
    `- archive: ${path.basename(archive)}, ${mb(archiveBytes)} MB${FORMAT === 'tar.gz' ? ' compressed' : ''} (${archiveBytes} bytes); tar stream ${mb(tarStreamBytes)} MB uncompressed; ` +
      `${unpacked.files} files, ${mb(unpacked.bytes)} MB unpacked (${unpacked.bytes} bytes); ${copies} cop${copies === 1 ? 'y' : 'ies'} of ${CORPUS}; made in ${fmt(archiveMs / 1000, 1)} s`,
  );
  p(`- database: ${dbShown}; storage: ${storageShown}`);
  p(
    `- disk: tar -x target, data dir and storage ${sameDisk ? 'on the same filesystem' : 'NOT all on the same filesystem'} (${os.tmpdir()}); \`sync\` before each timed step; the archive is in the page cache for both sides`,
  );
  p(
    `- tar -x peak memory: ${TIME ? '/usr/bin/time -f %M (the larger of tar and its gzip child, not their sum)' : `/proc/<pid>/status VmHWM of tar polled every ${SAMPLE_MS} ms (tar alone, not its gzip child)`}`,
  );
  p(
    `- upload peak memory: this process's RSS sampled every ${SAMPLE_MS} ms during the upload, minus its RSS just before it (Lectern runs in this process${db.kind === 'embedded' ? ', and so does its embedded database' : ''}; curl sends with \`--data-binary @file\` in its own process)` +
      (hwms.length ? `; kernel VmHWM (reset before each upload) minus the same baseline: max ${mb(Math.max(...hwms))} MB` : ''),
  );
  p();
  p('| side | median wall (s) | MB/s of archive | MB/s unpacked | peak memory (MB) |');
  p('|---|---:|---:|---:|---:|');
  p(`| tar -x | ${fmt(tarS)} | ${fmt(archiveBytes / MB / tarS, 1)} | ${fmt(unpacked.bytes / MB / tarS, 1)} | ${mb(tarPeak)} (RSS of tar) |`);
  p(`| Lectern upload | ${fmt(upS)} | ${fmt(archiveBytes / MB / upS, 1)} | ${fmt(unpacked.bytes / MB / upS, 1)} | ${mb(upPeak)} (RSS growth of the server) |`);
  p();
  p(`**upload / tar -x = ${fmt(upS / tarS)}×** (median of ${ROUNDS})`);
  p();
  const failed = rounds.filter((r) => r.up.errors.length || r.up.sections === 0);
  p(
    failed.length
      ? `**Search indexing failed in ${failed.length} of ${ROUNDS} uploads** (each still answered 201, success: true; the version is served but not searchable, and its upload time holds the indexing only up to the failure): ${failed[0]!.up.errors[0] ?? 'no sections indexed, nothing logged'}${failed.length > 1 ? ' (logged for the first; see the rounds)' : ''}`
      : `Search indexing: every upload indexed (${rounds.map((r) => r.up.sections).join(', ')} sections).`,
  );
  p();
  p(
    'Rounds (seconds; upload phases seen from outside: spool = until the unpack dir appears; unpack = unpack, checks, build row, walk; store = storage.putDirectory; switch = until the indexer lists the stored files; index read = reading and parsing the stored pages, until its last storage read; index write = the index transaction, ANALYZE, build finished, answer):',
  );
  p();
  p(
    '| round | order | tar -x | upload | curl total | spool | unpack | store | switch | index read | index write | sections indexed | upload peak Δ RSS MB (sampled / VmHWM) | peak RSS MB | samples, max gap ms | tar RSS MB |',
  );
  p('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  rounds.forEach(({ order, tar, up }, i) => {
    const ph = up.phases;
    p(
      `| ${i + 1} | ${order} | ${fmt(tar.seconds)} | ${fmt(up.seconds)} | ${fmt(up.curlSeconds)} | ${fmt(ph.spool)} | ${fmt(ph.unpack)} | ${fmt(ph.store)} | ${fmt(ph.switch)} | ${fmt(ph.read)} | ${fmt(ph.write)} | ${up.sections}${up.errors.length ? ' (failed)' : ''} | ` +
        `${mb(up.peakDelta)} / ${up.hwmDelta === null ? '–' : mb(up.hwmDelta)} | ${mb(up.peakAbs)} | ${up.samples}, ${fmt(up.maxGap, 0)} | ${mb(tar.peak)} |`,
    );
  });
  p();
  p(`(whole run ${fmt((performance.now() - started) / 1000, 0)} s before cleanup)`);
  console.log(lines.join('\n'));
} catch (e) {
  console.error(e);
  process.exitCode = 1;
} finally {
  await cleanup();
}
