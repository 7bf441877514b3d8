// Benchmark (not a test): `lectern search reindex` on a large corpus, as a person runs it on the
// embedded database (`lectern` by its shebang, with the one-shot flags: docs/design/startup.md):
// Debian's python3-doc (the Python documentation, about 500 pages) published as a version of one
// project, then the command run on a copy of that data dir, R rounds. With `--base <rev>` the same
// command of that revision (test/bench/side-by-side.ts) runs on its own copy, alternating; both must
// know the same migrations (the data dir is made by this checkout). Prints each run, then the
// medians (wall clock from spawn to exit).
//
//   apt-get install python3-doc && npx tsx test/bench/reindex.ts [rounds=3] [--base <rev>]
import './production-mode.ts';

import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { publishBuild } from '../../src/builds/publish.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createEvents } from '../../src/events.ts';
import { FileStorage } from '../../src/storage/file.ts';
import { benchArgs, cleanUp, median, ROOT, tempDir, worktree } from './side-by-side.ts';

const CORPUS = '/usr/share/doc/python3-doc/html';
const { rounds: ROUNDS, base: BASE } = benchArgs('usage: npx tsx test/bench/reindex.ts [rounds=3] [--base <rev>]', 3);
if (!existsSync(CORPUS)) {
  console.error(`${CORPUS} is missing: install Debian's python3-doc (apt-get install -y python3-doc)`);
  process.exit(2);
}

/** A data dir holding the corpus published as project `python`, version `latest` (and indexed once). */
async function publishedDataDir(): Promise<string> {
  // The corpus with its links resolved: a build's output may hold no symbolic link.
  const corpus = tempDir('lectern-bench-pydoc-');
  execFileSync('cp', ['-rL', `${realpathSync(CORPUS)}/.`, corpus]);
  const dataDir = tempDir('lectern-bench-reindex-');
  const db = await openDatabase({ dataDir });
  try {
    const prisma = db.prisma;
    const project = await prisma.project.create({ data: { name: 'python', slug: 'python', repositoryUrl: 'https://example.com/python.git' } });
    const version = await prisma.version.create({ data: { projectId: project.id, slug: 'latest', verboseName: 'latest', type: 'branch', active: true } });
    const build = await prisma.build.create({
      data: { projectId: project.id, versionId: version.id, versionSlug: 'latest', state: 'finished', success: true },
    });
    await publishBuild(
      { prisma, storage: new FileStorage(path.join(dataDir, 'storage')), events: createEvents() },
      { projectSlug: 'python', version: { id: version.id, slug: 'latest' }, buildId: build.id, htmlDir: corpus },
    );
  } finally {
    await db.close();
  }
  return dataDir;
}

/** Seconds `lectern search reindex` takes in checkout `cwd` on data dir `dataDir`, and the first line it printed. */
function reindex(cwd: string, dataDir: string): Promise<{ seconds: number; said: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const env = { ...process.env, PATH: `${path.join(ROOT, 'node_modules/.bin')}:${process.env.PATH ?? ''}`, LECTERN_DATA_DIR: dataDir };
    const child = spawn(path.join(cwd, 'src/bin.js'), ['search', 'reindex'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b));
    child.stderr.on('data', (b: Buffer) => (out += b));
    child.on('exit', (code) =>
      code === 0
        ? resolve({ seconds: (performance.now() - started) / 1000, said: out.trim().split('\n')[0] ?? '' })
        : reject(new Error(`exited ${code}: ${out}`)),
    );
  });
}

try {
  const made = await publishedDataDir();
  const subjects = [{ name: 'this checkout', cwd: ROOT }, ...(BASE ? [{ name: `base ${BASE}`, cwd: worktree(BASE, tempDir('lectern-bench-base-')) }] : [])].map(
    (s) => {
      const dataDir = tempDir('lectern-bench-reindex-copy-');
      cpSync(made, dataDir, { recursive: true });
      return { ...s, dataDir, seconds: [] as number[] };
    },
  );
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of r % 2 ? [...subjects].reverse() : subjects) {
      const { seconds, said } = await reindex(s.cwd, s.dataDir);
      s.seconds.push(seconds);
      console.log(`round ${r + 1} ${s.name}: ${seconds.toFixed(2)} s (${said})`);
    }
  }
  console.log(`\nsearch reindex of Python's documentation, median of ${ROUNDS} rounds`);
  for (const s of subjects) console.log(`${s.name.padEnd(24)} ${median(s.seconds).toFixed(2)} s`);
} finally {
  cleanUp();
}
