// Benchmark (not a test): what a second build costs once the version's environment and pip's
// downloads are kept (docs/design/images.md "Caches"), on the host's system and in a build image,
// side by side in one run. For each of the two, a Sphinx project whose requirements install a local
// package is imported (the first build), then built again with force R times (nothing changed),
// the two Lecterns' rounds interleaved, the order alternating; plain `python3 -m sphinx` of the same
// tree is the baseline, run after each second build the same way (on the host, and with bubblewrap
// in the same image, without Lectern). Prints the first build command by command, the medians, the
// second build's overhead over sphinx-build (target: at most 1 s), also as the median of each
// round's difference (a second build less the sphinx-build run right after it: the machine's drift
// cancels), and its ratio to the first; then what the overlay costs a command against the host's
// bind (`true`, N times in each sandbox).
//
//   npx tsx test/bench/images.ts [rounds=5] [--images DIR] [--database-url URL]
//     DIR: LECTERN_BUILD_IMAGES_DIR with debian-13 (default: the test images, made if missing)
//     URL: a PostgreSQL server's, on which each Lectern gets a database made and dropped (default: the embedded database)
// Image creation time is printed by `lectern images build` itself ("made in N s").
import './production-mode.ts';

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { buildApp } from '../../src/app.ts';
import { readImage } from '../../src/builds/images.ts';
import { Worker } from '../../src/builds/worker.ts';
import { DEFAULT_BUILD_LIMITS, loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createUser } from '../../src/domain/users.ts';
import { syncProjectVersions } from '../../src/domain/version-sync.ts';
import { createLogger } from '../../src/log.ts';
import { prepareSandbox } from '../../src/sandbox/sandbox.ts';
import { runCommand } from '../../src/sandbox/subprocess.ts';
import { Cipher } from '../../src/secrets.ts';
import { sphinxFiles } from '../helpers/builds.ts';
import { git, startGitServer, TEST_NETWORK } from '../helpers/git.ts';
import { ensureTestImages } from '../helpers/images.ts';

const args = process.argv.slice(2);
const dbAt = args.indexOf('--database-url');
const adminUrl = dbAt >= 0 ? args.splice(dbAt, 2)[1] : undefined;
const at = args.indexOf('--images');
const imagesArg = at >= 0 ? args.splice(at, 2)[1] : undefined;
const rounds = Number(args[0] ?? 5);
const imagesDir = imagesArg ?? (await ensureTestImages(['debian-13']));
const image = await readImage(imagesDir, 'debian-13');
if (!image) throw new Error(`no debian-13 image in ${imagesDir}: lectern images build debian-13`);

const SECRET = 'bench-secret-key-0123456789abcdef012345';
const gitServer = await startGitServer();
const pages: Record<string, string> = {};
for (let i = 0; i < 12; i++) pages[`docs/page${i}.rst`] = `Page ${i}\n=======\n\n${'Some text. '.repeat(40)}\n\nSection\n-------\n\nMore.\n`;
const files = sphinxFiles({
  ...pages,
  'docs/index.rst': `Bench\n=====\n\n.. toctree::\n\n${Object.keys(pages)
    .map((p) => `   ${path.basename(p, '.rst')}`)
    .join('\n')}\n`,
  '.readthedocs.yaml': [
    'version: 2',
    'build:',
    '  os: ubuntu-24.04',
    'python:',
    '  install:',
    '    - requirements: docs/requirements.txt',
    'sphinx:',
    '  configuration: docs/conf.py',
    '',
  ].join('\n'),
  'docs/requirements.txt': './benchext\n',
  'benchext/setup.py': "from setuptools import setup\nsetup(name='bench-ext', version='1.0', packages=['bench_ext'])\n",
  'benchext/bench_ext/__init__.py': "def setup(app):\n    return {'version': '1.0', 'parallel_read_safe': True}\n",
  'docs/conf.py': "project = 'Bench'\nextensions = ['bench_ext']\nhtml_theme = 'alabaster'\n",
});
const repo = gitServer.repo('bench-images', files);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const f = (ms: number) => `${ms.toFixed(0).padStart(6)} ms`;

const made: string[] = [];
/** A database of its own on the server of `--database-url` (each Lectern's worker claims only its own builds). */
async function freshDatabase(label: string): Promise<string> {
  const name = `lectern_bench_${label}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  made.push(name);
  const url = new URL(adminUrl!);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A Lectern with its worker, on the host's system (no images) or with `images`. */
async function lectern(images: string | null) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-images-'));
  const db = await openDatabase({ dataDir, databaseUrl: adminUrl ? await freshDatabase(images ? 'image' : 'host') : undefined });
  const config = loadConfig({
    LECTERN_DATA_DIR: dataDir,
    LECTERN_LOG_LEVEL: 'silent',
    LECTERN_API_THROTTLE: '0',
    LECTERN_BUILD_NETWORK_ALLOW: TEST_NETWORK,
    LECTERN_BUILD_IMAGES_DIR: images ?? path.join(dataDir, 'no-images'),
  });
  const log = createLogger('silent');
  const { app, services, storage } = buildApp({ config, db, log, secretKey: SECRET });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const worker = new Worker(
    {
      prisma: db.prisma,
      storage,
      cipher: new Cipher(SECRET),
      log,
      dataDir,
      publicUrl: config.publicUrl,
      syncVersions: (projectId, url) => syncProjectVersions(services, projectId, url),
      limits: config.build,
      events: services.events,
    },
    { concurrency: 1 },
  );
  await worker.start();
  const { token } = await createUser(db.prisma, 'bench');
  const api = (p: string, body: unknown) =>
    fetch(`${base}/api/v3${p}`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { authorization: `Token ${token}`, 'content-type': 'application/json' },
    });
  return { dataDir, db, worker, server, api, events: services.events };
}

type Lectern = Awaited<ReturnType<typeof lectern>>;

/**
 * The build once finished: asked again at each of its progress events (its end announces one), not
 * polled (polling the embedded database every few milliseconds took the event loop the build runs on).
 */
async function finished(l: Lectern, id: number) {
  for (;;) {
    const progressed = new Promise<void>((resolve) => {
      const on = (e: { buildId: number }) => {
        if (e.buildId !== id) return;
        l.events.off('buildProgress', on);
        resolve();
      };
      l.events.on('buildProgress', on);
      setTimeout(() => {
        l.events.off('buildProgress', on);
        resolve();
      }, 1000).unref();
    });
    const { state } = await l.db.prisma.build.findUniqueOrThrow({ where: { id }, select: { state: true } });
    if (state === 'finished') {
      const b = await l.db.prisma.build.findUniqueOrThrow({ where: { id }, include: { commands: { orderBy: { id: 'asc' } } } });
      if (!b.success) throw new Error(`build ${id} failed: ${b.error}\n${b.commands.map((c) => `$ ${c.command}\n${c.output}`).join('\n')}`);
      return b;
    }
    await progressed;
  }
}

/** The first build of the bench project (the import's), and the means to build it again with force. */
async function firstBuild(label: string, l: Lectern) {
  const t0 = performance.now();
  const res = await l.api('/projects/', { name: `Bench ${label}`, repository: { url: repo.url, type: 'git' } });
  if (res.status !== 201) throw new Error(`import answered ${res.status}: ${await res.text()}`);
  const slug = ((await res.json()) as { slug: string }).slug;
  const firstId = (await l.db.prisma.build.findFirstOrThrow({ where: { project: { slug } }, orderBy: { id: 'desc' } })).id;
  const first = await finished(l, firstId);
  return { first, firstMs: performance.now() - t0, seconds: [] as number[], last: first, slug };
}

/** One more build of the same version, forced (nothing changed since the last). */
async function secondBuild(l: Lectern, run: Awaited<ReturnType<typeof firstBuild>>) {
  const s0 = performance.now();
  const triggered = await l.api(`/projects/${run.slug}/versions/latest/builds/`, { force: true });
  if (triggered.status !== 202) throw new Error(`trigger answered ${triggered.status}: ${await triggered.text()}`);
  run.last = await finished(l, ((await triggered.json()) as { build: { id: number } }).build.id);
  run.seconds.push(performance.now() - s0);
}

function steps(label: string, b: Awaited<ReturnType<typeof finished>>) {
  console.log(`\n${label}, command by command (ms; gap = since the previous command ended)`);
  let previous = b.startedAt!.getTime();
  for (const c of b.commands) {
    const start = c.startTime.getTime();
    const end = c.endTime?.getTime() ?? start;
    console.log(`${String(end - start).padStart(6)}  gap ${String(start - previous).padStart(4)}  ${c.command.slice(0, 100)}`);
    previous = end;
  }
  console.log(`         gap ${String(b.finishedAt!.getTime() - previous).padStart(4)}  (publishing, to finished)`);
}

// Plain sphinx-build of the same tree: on the host, and in the image under bubblewrap.
const checkout = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-checkout-'));
git(checkout, 'clone', '--quiet', repo.url, '.');
function sphinx(inImage: boolean): number {
  const out = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-out-'));
  const cmd = ['/usr/bin/python3', '-m', 'sphinx', '-T', '-q', '-b', 'html', '-d', path.join(out, 'doctrees'), '.', path.join(out, 'html')];
  const argv = inImage
    ? [
        'bwrap',
        '--ro-bind',
        image!.rootfs,
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--tmpfs',
        '/tmp',
        '--bind',
        checkout,
        checkout,
        '--bind',
        out,
        out,
        '--chdir',
        path.join(checkout, 'docs'),
        '--',
        ...cmd,
      ]
    : cmd;
  const t0 = performance.now();
  execFileSync(argv[0]!, argv.slice(1), {
    cwd: path.join(checkout, 'docs'),
    stdio: 'ignore',
    env: { PATH: '/usr/bin:/bin', PYTHONPATH: path.join(checkout, 'benchext') },
  });
  const ms = performance.now() - t0;
  rmSync(out, { recursive: true, force: true });
  return ms;
}

// Both Lecterns side by side in one process: first builds, then the second builds and the plain
// sphinx-builds interleaved, round by round, the order alternating (neither gets a warmer machine).
const setups = [
  { label: 'host', inImage: false, l: await lectern(null) },
  { label: 'debian-13', inImage: true, l: await lectern(imagesDir) },
];
const runs = [];
for (const s of setups) runs.push(await firstBuild(s.label, s.l));
const plain: number[][] = setups.map(() => []);
for (let i = 0; i < rounds; i++) {
  const order = i % 2 ? [1, 0] : [0, 1];
  for (const k of order) {
    await secondBuild(setups[k]!.l, runs[k]!);
    plain[k]!.push(sphinx(setups[k]!.inImage));
  }
}
const results: Record<string, { run: (typeof runs)[number]; sphinx: number[] }> = {};
for (const [k, s] of setups.entries()) {
  results[s.label] = { run: runs[k]!, sphinx: plain[k]! };
  steps(`${s.label}: first build`, runs[k]!.first);
  steps(`${s.label}: last second build`, runs[k]!.last);
  await s.l.worker.stop(1000);
  s.l.server.close();
  await s.l.db.close();
  rmSync(s.l.dataDir, { recursive: true, force: true });
}
if (made.length) {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  for (const name of made) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}

console.log(`\n${Object.keys(pages).length + 1}-page Sphinx project with a local package in its requirements, ${rounds} second builds, medians`);
console.log('                first build   second build   sphinx-build   second overhead   paired overhead   second/first');
for (const [label, { run, sphinx: sp }] of Object.entries(results)) {
  const second = median(run.seconds);
  const plain = median(sp);
  // Each second build against the plain sphinx-build run right after it: the machine's drift cancels.
  const paired = median(run.seconds.map((ms, i) => ms - sp[i]!));
  console.log(
    `${label.padEnd(14)}  ${f(run.firstMs)}     ${f(second)}      ${f(plain)}      ${f(second - plain)}         ${f(paired)}          ${(second / run.firstMs).toFixed(2)}x`,
  );
}
console.log('target: second overhead <= 1000 ms');

// The overlay's cost: `true` in a sandbox over the image and layer, against the host's own root.
const work = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-sandbox-'));
mkdirSync(path.join(work, 'w'));
const limits = { ...DEFAULT_BUILD_LIMITS, networkAllow: [] };
async function sandboxed(withImage: boolean): Promise<number> {
  const t0 = performance.now();
  const r = await runCommand(['true'], {
    cwd: path.join(work, 'w'),
    env: { PATH: '/usr/bin:/bin' },
    timeoutMs: 30_000,
    sandbox: prepareSandbox(['true'], {
      workdir: path.join(work, 'w'),
      hide: [],
      cwd: path.join(work, 'w'),
      network: false,
      uid: null,
      limits,
      image: withImage ? { rootfs: image!.rootfs, layer: path.join(work, 'layer') } : null,
    }),
  });
  if (r.exitCode !== 0) throw new Error(r.output);
  return performance.now() - t0;
}
const host: number[] = [];
const overlay: number[] = [];
for (let i = 0; i < 20; i++) {
  host.push(await sandboxed(false));
  overlay.push(await sandboxed(true));
}
console.log(`\none command (\`true\`) in the sandbox, 20 runs each, interleaved, medians`);
console.log(`host's root (binds)     ${f(median(host))}`);
console.log(`image + overlay         ${f(median(overlay))}   (${(median(overlay) / median(host)).toFixed(2)}x)`);

await gitServer.close();
rmSync(checkout, { recursive: true, force: true });
rmSync(work, { recursive: true, force: true });
process.exit(0);
