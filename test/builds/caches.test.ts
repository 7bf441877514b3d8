// What makes a project's second build fast (docs/design/images.md "Caches"): pip's downloads kept
// in the project's cache, and the version's environment reused when nothing it was made from
// changed. A package index on the test host (Python's http.server in the test network namespace)
// counts what builds download. A pull request's preview neither reads nor leaves a cache.
import { type ChildProcess, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, sphinxFiles, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { type GitServer, git, spawnOnTestHost, startGitServer, TEST_HOST } from '../helpers/git.ts';
import { freePort } from '../helpers/net.ts';
import { until } from '../helpers/wait.ts';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 240_000 });

let t: TestApp;
let server: GitServer;
let token: string;
let worker: Worker;
let index: ChildProcess;
let indexDir: string;
let indexUrl: string;
/** Every request the package index answered, as its log line. */
const requests: string[] = [];

beforeAll(async () => {
  t = await testApp();
  server = await startGitServer();
  token = await t.user('cacher');
  worker = await startTestWorker(t);
  // A wheel, made here offline, served as a PEP 503 simple index.
  indexDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-index-'));
  const src = path.join(indexDir, 'src');
  mkdirSync(path.join(src, 'fixturecache'), { recursive: true });
  writeFileSync(path.join(src, 'setup.py'), "from setuptools import setup\nsetup(name='fixturecache', version='1.0', packages=['fixturecache'])\n");
  writeFileSync(path.join(src, 'fixturecache', '__init__.py'), 'VALUE = 42\n');
  const wheels = path.join(indexDir, 'simple', 'fixturecache');
  mkdirSync(wheels, { recursive: true });
  execFileSync('/usr/bin/python3', ['-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '--no-index', '-w', wheels, src], { stdio: 'pipe' });
  writeFileSync(path.join(wheels, 'index.html'), '<a href="fixturecache-1.0-py3-none-any.whl">fixturecache-1.0-py3-none-any.whl</a>\n');
  const port = await freePort();
  // Files as PyPI serves them: immutable, cacheable for a year (what pip's HTTP cache keeps).
  const serve = [
    'import functools, http.server, sys',
    'class H(http.server.SimpleHTTPRequestHandler):',
    '    def end_headers(self):',
    "        if self.path.endswith('.whl'): self.send_header('Cache-Control', 'max-age=31536000, immutable')",
    '        super().end_headers()',
    'http.server.ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])), functools.partial(H, directory=sys.argv[3])).serve_forever()',
  ].join('\n');
  index = spawnOnTestHost('/usr/bin/python3', ['-c', serve, TEST_HOST, String(port), indexDir], { stdio: ['ignore', 'ignore', 'pipe'] });
  index.stderr!.setEncoding('utf8').on('data', (d: string) => requests.push(...d.split('\n').filter((l) => l.includes('"GET '))));
  indexUrl = `http://${TEST_HOST}:${port}/simple`;
  await until('the package index', async () => {
    try {
      execFileSync(
        'ip',
        ['netns', 'exec', 'lectern-test', '/usr/bin/python3', '-c', `import urllib.request; urllib.request.urlopen('${indexUrl}/fixturecache/')`],
        {
          stdio: 'pipe',
        },
      );
      return true;
    } catch {
      return false;
    }
  });
  requests.length = 0;
});
afterAll(async () => {
  index?.kill('SIGKILL');
  await worker?.stop(1000);
  await server?.close();
  await t?.close();
  rmSync(indexDir, { recursive: true, force: true });
});

const YAML = ['version: 2', 'python:', '  install:', '    - requirements: docs/requirements.txt', 'sphinx:', '  configuration: docs/conf.py', ''].join('\n');
const CONF = "import fixturecache\nproject = 'Cached %d' % fixturecache.VALUE\nhtml_theme = 'alabaster'\n";
const downloads = (what: string) => requests.filter((l) => l.includes(what)).length;

async function trigger(slug: string, version = 'latest') {
  const res = await t.http.post(`/api/v3/projects/${slug}/versions/${version}/builds/`).set('authorization', `Token ${token}`);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return waitForBuild(t, res.body.build.id, 180_000);
}
type BuildRow = Awaited<ReturnType<typeof waitForBuild>>;
const logOf = (b: BuildRow) => b.commands.map((c) => `$ ${c.command}\n${c.output}`).join('\n');

describe("a project's second build", () => {
  let slug: string;
  let repo: ReturnType<GitServer['repo']>;
  let first: BuildRow;
  beforeAll(async () => {
    repo = server.repo(
      'cached',
      sphinxFiles({
        '.readthedocs.yaml': YAML,
        'docs/conf.py': CONF,
        'docs/requirements.txt': `--index-url ${indexUrl}\n--trusted-host ${TEST_HOST}\nfixturecache\n`,
      }),
    );
    const p = await importProject(t, token, 'Cached', repo.url);
    slug = p.slug;
    first = await waitForBuild(t, await latestBuildOf(t, slug), 180_000);
  });

  it('downloads the package once, then reuses the environment: no download, no pip install, the log says so', async () => {
    expect(first.error, logOf(first)).toBeNull();
    expect(downloads('fixturecache-1.0-py3-none-any.whl')).toBe(1);
    const asked = requests.length;
    const second = await trigger(slug);
    expect(second.error, logOf(second)).toBeNull();
    const reuse = second.commands.find((c) => c.description === 'Reusing the environment');
    expect(reuse?.output).toBe(
      `Reusing the environment build #${first.id} made: the image, tools, Python install configuration, jobs and requirements files are the same.\n`,
    );
    expect(second.commands.map((c) => c.command)).not.toContainEqual(expect.stringMatching(/pip install|-m venv/));
    expect(requests.length, 'nothing asked of the index').toBe(asked);
  });

  it('installs again when the requirements change, from the cache: the wheel is not downloaded again', async () => {
    repo.commit({ 'docs/requirements.txt': `--index-url ${indexUrl}\n--trusted-host ${TEST_HOST}\nfixturecache  # pinned later\n` });
    git(repo.work, 'push', '--quiet', 'origin', 'main');
    const third = await trigger(slug);
    expect(third.error, logOf(third)).toBeNull();
    expect(third.commands.find((c) => c.description === 'Reusing the environment')).toBeUndefined();
    const pip = third.commands.find((c) => c.command.includes('pip install'));
    expect(pip?.output).toMatch(/Using cached \S*fixturecache-1\.0-py3-none-any\.whl/);
    expect(downloads('fixturecache-1.0-py3-none-any.whl')).toBe(1);
  });

  it("gives a pull request's preview neither the project's cache nor its environment", async () => {
    const project = await t.db.prisma.project.findUniqueOrThrow({ where: { slug } });
    await t.db.prisma.version.create({
      data: { projectId: project.id, slug: '9', verboseName: '9', identifier: 'main', type: 'external', active: true, externalState: 'open' },
    });
    repo.commit({
      '.readthedocs.yaml': YAML.replace(
        'sphinx:',
        'build:\n  os: ubuntu-22.04\n  jobs:\n    pre_install:\n      - ls -A ~/.cache; case $READTHEDOCS_VIRTUALENV_PATH in */builds/*) echo venv in the build;; *) echo venv kept;; esac\nsphinx:',
      ),
    });
    git(repo.work, 'push', '--quiet', 'origin', 'main');
    const before = downloads('fixturecache-1.0-py3-none-any.whl');
    const preview = await trigger(slug, '9');
    expect(preview.error, logOf(preview)).toBeNull();
    const listing = preview.commands.find((c) => c.command.includes('ls -A ~/.cache'));
    expect(listing?.output).toBe('venv in the build\n');
    expect(preview.commands.find((c) => c.description === 'Reusing the environment')).toBeUndefined();
    // It downloaded the wheel itself: nothing of the project's cache was there.
    expect(downloads('fixturecache-1.0-py3-none-any.whl')).toBe(before + 1);
  });
});

describe('a project cache larger than LECTERN_BUILD_CACHE_MAX_BYTES', () => {
  it('is emptied at the next build, which says so and makes its environment again', async () => {
    const small = await testApp({ LECTERN_BUILD_CACHE_MAX_BYTES: '0' });
    const smallWorker = await startTestWorker(small);
    try {
      const smallToken = await small.user('small');
      const repo = server.repo(
        'over-bound',
        sphinxFiles({
          '.readthedocs.yaml': YAML,
          'docs/conf.py': CONF,
          'docs/requirements.txt': `--index-url ${indexUrl}\n--trusted-host ${TEST_HOST}\nfixturecache\n`,
        }),
      );
      const p = await importProject(small, smallToken, 'Over bound', repo.url);
      const first = await waitForBuild(small, await latestBuildOf(small, p.slug), 180_000);
      expect(first.error, logOf(first)).toBeNull();
      const res = await small.http.post(`/api/v3/projects/${p.slug}/versions/latest/builds/`).set('authorization', `Token ${smallToken}`).send({ force: true });
      const second = await waitForBuild(small, res.body.build.id, 180_000);
      expect(second.error, logOf(second)).toBeNull();
      expect(second.commands.find((c) => c.description === 'cache')?.output).toContain("The project's cache (more than 0 KiB) was emptied");
      expect(second.commands.find((c) => c.description === 'Reusing the environment')).toBeUndefined();
      expect(second.commands.map((c) => c.command)).toContainEqual(expect.stringContaining('-m venv'));
    } finally {
      await smallWorker.stop(1000);
      await small.close();
    }
  });
});

describe('the caches of what was deleted', () => {
  it("are removed by the worker's housekeeping: a deleted version's environment, then a deleted project's whole cache", async () => {
    const app = await testApp();
    // A short lease: the housekeeping runs every half lease (a second).
    const w = await startTestWorker(app, { leaseSeconds: 2 });
    try {
      const owner = await app.user('deleter');
      const repo = server.repo(
        'deleted-later',
        sphinxFiles({
          '.readthedocs.yaml': YAML,
          'docs/conf.py': CONF,
          'docs/requirements.txt': `--index-url ${indexUrl}\n--trusted-host ${TEST_HOST}\nfixturecache\n`,
        }),
      );
      const p = await importProject(app, owner, 'Deleted later', repo.url);
      const first = await waitForBuild(app, await latestBuildOf(app, p.slug), 180_000);
      expect(first.error, logOf(first)).toBeNull();
      const project = await app.db.prisma.project.findUniqueOrThrow({ where: { slug: p.slug }, include: { versions: true } });
      const cache = path.join(app.dataDir, 'cache', 'projects', String(project.id));
      const latest = project.versions.find((v) => v.slug === 'latest')!;
      expect(readdirSync(path.join(cache, 'envs')).sort()).toEqual([String(latest.id), `${latest.id}.key`]);

      // The version goes (as a sync removes one whose branch is gone): its environment follows.
      await app.db.prisma.version.delete({ where: { id: latest.id } });
      await until('the environment of the deleted version to go', () => !existsSync(path.join(cache, 'envs', String(latest.id))), 20_000);
      expect(readdirSync(path.join(cache, 'envs'))).toEqual([]);
      expect(existsSync(path.join(cache, 'downloads')), "pip's downloads stay: the project builds its other versions with them").toBe(true);

      // The project goes: nothing of its cache stays on the machine.
      const res = await app.gql('mutation($p: String!) { deleteProject(project: $p, confirm: $p) { __typename } }', { p: p.slug }, owner);
      expect(res.data?.deleteProject.__typename, JSON.stringify(res)).toBe('MutationDeleteProjectSuccess');
      await until("the deleted project's cache to go", () => !existsSync(cache), 20_000);
    } finally {
      await w.stop(1000);
      await app.close();
    }
  });
});
