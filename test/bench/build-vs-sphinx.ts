// Benchmark (not a test): what Lectern adds to a build. In one run, on the embedded database with
// the worker in-process, a small Sphinx project served by git daemon on the test host (test/helpers/git.ts) is
//   built       triggered through the REST API and followed until finished (cold: the version's
//               first build; warm: the next builds of the same version)
//   sphinx      `python -m sphinx -T -b html` alone on a checkout of the same commit (cold: a new
//               output dir; warm: the same command again into a new output dir)
// and prints trigger -> cloning (from the build's own timestamps), trigger -> finished, plain
// sphinx-build, and the overhead (built - sphinx). Targets (issue 4): trigger -> cloning under
// 200 ms; warm overhead under 1 s.
// Run: npx tsx test/bench/build-vs-sphinx.ts [warm-rounds]
// First: the app runs as `lectern serve` runs it, in production mode (src/bin.js).
import './production-mode.ts';

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.ts';
import { Worker } from '../../src/builds/worker.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createUser } from '../../src/domain/users.ts';
import { syncProjectVersions } from '../../src/domain/version-sync.ts';
import { createLogger } from '../../src/log.ts';
import { Cipher } from '../../src/secrets.ts';
import { sphinxFiles } from '../helpers/builds.ts';
import { git, startGitServer, TEST_NETWORK } from '../helpers/git.ts';

const rounds = Number(process.argv[2] ?? 5);
const SECRET = 'bench-secret-key-0123456789abcdef012345';
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-build-'));
const db = await openDatabase({ dataDir });
const config = loadConfig({ LECTERN_DATA_DIR: dataDir, LECTERN_LOG_LEVEL: 'silent', LECTERN_API_THROTTLE: '0', LECTERN_BUILD_NETWORK_ALLOW: TEST_NETWORK });
const log = createLogger('silent');
const { app, storage, services } = buildApp({ config, db, log, secretKey: SECRET });
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

const gitServer = await startGitServer();
// A small project: a dozen pages.
const pages: Record<string, string> = {};
for (let i = 0; i < 12; i++) pages[`docs/page${i}.rst`] = `Page ${i}\n=======\n\n${'Some text. '.repeat(40)}\n\nSection\n-------\n\nMore.\n`;
const files = sphinxFiles({
  ...pages,
  'docs/index.rst': `Bench\n=====\n\n.. toctree::\n\n${Object.keys(pages)
    .map((p) => `   ${path.basename(p, '.rst')}`)
    .join('\n')}\n`,
});
const repo = gitServer.repo('bench', files);
const { token } = await createUser(db.prisma, 'bench');
const api = (p: string, init: RequestInit = {}) =>
  fetch(`${base}/api/v3${p}`, { ...init, headers: { authorization: `Token ${token}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });

async function waitFinished(id: number): Promise<void> {
  for (;;) {
    const b = await db.prisma.build.findUniqueOrThrow({ where: { id } });
    if (b.state === 'finished') {
      if (!b.success) throw new Error(`build ${id} failed: ${b.error}`);
      return;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** One build through the API: ms from the trigger to `cloning` (database clock) and to finished. */
async function timedBuild(trigger: () => Promise<number>) {
  const t0 = performance.now();
  const id = await trigger();
  await waitFinished(id);
  const total = performance.now() - t0;
  const b = await db.prisma.build.findUniqueOrThrow({ where: { id } });
  return { toCloning: b.startedAt!.getTime() - b.createdAt.getTime(), total };
}

// Cold: the import queues the first build of `latest`.
const cold = await timedBuild(async () => {
  const res = await api('/projects/', { method: 'POST', body: JSON.stringify({ name: 'Bench', repository: { url: repo.url, type: 'git' } }) });
  if (res.status !== 201) throw new Error(`import answered ${res.status}: ${await res.text()}`);
  return (await db.prisma.build.findFirstOrThrow({ where: { project: { slug: 'bench' } }, orderBy: { id: 'desc' } })).id;
});
const warm: { toCloning: number; total: number }[] = [];
for (let i = 0; i < rounds; i++) {
  warm.push(
    await timedBuild(async () => {
      const res = await api('/projects/bench/versions/latest/builds/', { method: 'POST' });
      if (res.status !== 202) throw new Error(`trigger answered ${res.status}: ${await res.text()}`);
      return ((await res.json()) as { build: { id: number } }).build.id;
    }),
  );
}

// Plain sphinx-build on a checkout of the same commit.
const checkout = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-checkout-'));
git(checkout, 'clone', '--quiet', repo.url, '.');
const sphinx = () => {
  const out = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-out-'));
  const t0 = performance.now();
  execFileSync('/usr/bin/python3', ['-m', 'sphinx', '-T', '-q', '-b', 'html', '-d', path.join(out, 'doctrees'), '.', path.join(out, 'html')], {
    cwd: path.join(checkout, 'docs'),
    stdio: 'ignore',
  });
  const ms = performance.now() - t0;
  rmSync(out, { recursive: true, force: true });
  return ms;
};
const sphinxCold = sphinx();
const sphinxWarm = Array.from({ length: rounds }, sphinx);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const f = (ms: number) => `${ms.toFixed(0).padStart(6)} ms`;
const warmTotal = median(warm.map((w) => w.total));
const warmSphinx = median(sphinxWarm);
console.log(`small Sphinx project (${Object.keys(pages).length + 1} pages), ${rounds} warm rounds, medians`);
console.log(`                      trigger->cloning   trigger->finished   sphinx-build alone   overhead   ratio`);
console.log(
  `cold (first build)    ${f(cold.toCloning)}          ${f(cold.total)}           ${f(sphinxCold)}        ${f(cold.total - sphinxCold)}   ${(cold.total / sphinxCold).toFixed(2)}x`,
);
console.log(
  `warm (same version)   ${f(median(warm.map((w) => w.toCloning)))}          ${f(warmTotal)}           ${f(warmSphinx)}        ${f(warmTotal - warmSphinx)}   ${(warmTotal / warmSphinx).toFixed(2)}x`,
);
console.log(`targets: trigger->cloning < 200 ms; warm overhead < 1000 ms`);

// Where the last warm build's time went: each command, and the time between commands.
const last = await db.prisma.build.findFirstOrThrow({
  where: { project: { slug: 'bench' } },
  orderBy: { id: 'desc' },
  include: { commands: { orderBy: { id: 'asc' } } },
});
console.log(`\nlast warm build, command by command (ms; gap = time since the previous command ended)`);
let previous = last.startedAt!.getTime();
for (const c of last.commands) {
  const start = c.startTime.getTime();
  const end = c.endTime?.getTime() ?? start;
  console.log(`${String(end - start).padStart(6)}  gap ${String(start - previous).padStart(4)}  ${c.command.slice(0, 100)}`);
  previous = end;
}
console.log(`         gap ${String(last.finishedAt!.getTime() - previous).padStart(4)}  (publishing, to finished)`);

await worker.stop(1000);
server.close();
await gitServer.close();
await db.close();
rmSync(checkout, { recursive: true, force: true });
rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
