// Repositories on this machine (LECTERN_BUILD_LOCAL_REPOSITORIES): a bare and a non-bare
// repository under an allowed directory, named by a plain path and by file://, built end to end
// and served; what is refused at import, with its message and nothing queued; the allowed
// directory absent from the build's own steps; and the build firewall's refusal explained.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { latestBuildOf, mkdocsFiles, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { type GitServer, git, startGitServer } from '../helpers/git.ts';
import { until } from '../helpers/wait.ts';

const SETTING = 'LECTERN_BUILD_LOCAL_REPOSITORIES';
let root: string;
let allowed: string;
let outside: string;
let t: TestApp;
let worker: Worker;
let token: string;

/** A work tree with one commit of `files` at `dir` (branch main). */
function makeRepo(dir: string, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '--quiet', '--initial-branch=main');
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '-m', 'initial');
}

const IMPORT = `mutation($input: ImportProjectInput!) { importProject(input: $input) {
  ... on MutationImportProjectSuccess { data { slug } }
  ... on ValidationError { message fieldErrors { field messages } }
  ... on Error { message } } }`;

async function importRepo(app: TestApp, userToken: string, name: string, url: string) {
  const res = await app.gql(IMPORT, { input: { name, repository: { url } } }, userToken);
  return res.data?.importProject as { data?: { slug: string }; message?: string; fieldErrors?: { field: string; messages: string[] }[] };
}

/** The build's command whose line contains `text`, with its output. */
const commandOf = (build: Awaited<ReturnType<typeof waitForBuild>>, text: string) => build.commands.find((c) => c.command.includes(text));

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'lectern-local-'));
  allowed = path.join(root, 'git');
  outside = path.join(root, 'elsewhere');
  mkdirSync(allowed);
  mkdirSync(outside);
  const yaml = [
    'version: 2',
    'mkdocs:',
    '  configuration: mkdocs.yml',
    'build:',
    '  jobs:',
    '    pre_build:',
    // (Here the allowed directory lies under /tmp, which is the build's own: the clone step's empty
    // mount point may be left there, so what is checked is the repositories it holds.)
    `      - "if [ -e ${allowed}/docs/.git ] || [ -e ${allowed}/docs.git/HEAD ]; then echo ALLOWED-DIR-VISIBLE; ls -la ${allowed}; else echo ALLOWED-DIR-ABSENT; fi"`,
    '',
  ].join('\n');
  makeRepo(path.join(allowed, 'docs'), { ...mkdocsFiles(), '.readthedocs.yaml': yaml });
  git(root, 'clone', '--quiet', '--bare', path.join(allowed, 'docs'), path.join(allowed, 'docs.git'));
  // Hostile neighbours: a repository outside, a link to it from inside, a repository inside whose
  // objects are borrowed from outside, and one whose .git is a link leading out.
  makeRepo(path.join(outside, 'secret'), { 'mkdocs.yml': 'site_name: Secret\n', 'docs/index.md': '# Secret\n' });
  symlinkSync(path.join(outside, 'secret'), path.join(allowed, 'link-out'));
  git(root, 'clone', '--quiet', '--shared', path.join(outside, 'secret'), path.join(allowed, 'borrowing'));
  mkdirSync(path.join(allowed, 'dotgit-link'));
  symlinkSync(path.join(outside, 'secret', '.git'), path.join(allowed, 'dotgit-link', '.git'));

  t = await testApp({ [SETTING]: allowed });
  token = await t.user('local');
  worker = await startTestWorker(t);
}, 120_000);

afterAll(async () => {
  await worker?.stop(1000);
  await t?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('a repository on this machine, under a directory the operator names', () => {
  it('a non-bare repository named by its plain path is built and served, and its directory is absent from the build steps', async () => {
    const imported = await importRepo(t, token, 'Local Plain', path.join(allowed, 'docs'));
    expect(imported.data?.slug, JSON.stringify(imported)).toBeTruthy();
    const build = await waitForBuild(t, await latestBuildOf(t, imported.data!.slug), 180_000);
    expect(build.success, build.error ?? '').toBe(true);
    expect(build.commit).toBe(git(path.join(allowed, 'docs'), 'rev-parse', 'HEAD'));
    const clone = commandOf(build, 'git clone');
    expect(clone?.command).toContain(`file://${allowed}/docs`);
    // The build's own command (build.jobs) does not see the directory the clone read.
    const job = commandOf(build, 'ALLOWED-DIR');
    expect(job?.output).toContain('ALLOWED-DIR-ABSENT');
    expect(job?.output).not.toContain('ALLOWED-DIR-VISIBLE');
    const page = await t.http.get(`/docs/${imported.data!.slug}/en/latest/`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Hello from MkDocs.');
    // Version sync read the local repository's branches too.
    const versions = await until('version sync of the local repository', async () => {
      const project = await t.db.prisma.project.findUniqueOrThrow({ where: { slug: imported.data!.slug } });
      return project.repositoryHead === 'main' ? project : null;
    });
    expect(versions.repositoryHead).toBe('main');
  }, 240_000);

  it('a bare repository named by a file:// URL is built and served', async () => {
    const imported = await importRepo(t, token, 'Local Bare', `file://${allowed}/docs.git`);
    expect(imported.data?.slug, JSON.stringify(imported)).toBeTruthy();
    const build = await waitForBuild(t, await latestBuildOf(t, imported.data!.slug), 180_000);
    expect(build.success, build.error ?? '').toBe(true);
    const page = await t.http.get(`/docs/${imported.data!.slug}/en/latest/about/`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('About page.');
  }, 240_000);

  it('paths and URLs leading outside are refused with a message naming the setting, and nothing is queued', async () => {
    const projects = await t.db.prisma.project.count();
    const builds = await t.db.prisma.build.count();
    const cases: [string, RegExp][] = [
      [path.join(outside, 'secret'), /is outside the directories/],
      [`file://${outside}/secret`, /is outside the directories/],
      [`${allowed}/../elsewhere/secret`, /may not contain '\.\.'/],
      [`file://${allowed}/../elsewhere/secret`, /may not contain '\.\.'/],
      [path.join(allowed, 'link-out'), /a link that leads outside/],
      [path.join(allowed, 'borrowing'), /objects\/info\/alternates points outside/],
      [path.join(allowed, 'dotgit-link'), /\.git points outside/],
      [`ext::sh -c touch% ${root}/pwned`, /transport helpers \(ext::\)/],
      ['fd::3', /transport helpers \(fd::\)/],
    ];
    for (const [url, why] of cases) {
      const r = await importRepo(t, token, `Refused ${cases.findIndex((c) => c[0] === url)}`, url);
      expect(r.data, url).toBeUndefined();
      const messages = (r.fieldErrors ?? []).find((f) => f.field === 'repository.url')?.messages.join(' ') ?? '';
      expect(messages, url).toMatch(why);
      expect(messages, url).toContain(SETTING);
    }
    expect(await t.db.prisma.project.count()).toBe(projects);
    expect(await t.db.prisma.build.count()).toBe(builds);
  });

  it('a link swapped to lead outside after the import fails the clone, naming the setting', async () => {
    const swap = path.join(allowed, 'swapped');
    symlinkSync(path.join(allowed, 'docs'), swap);
    const imported = await importRepo(t, token, 'Swapped', swap);
    expect(imported.data?.slug, JSON.stringify(imported)).toBeTruthy();
    await waitForBuild(t, await latestBuildOf(t, imported.data!.slug), 180_000);
    rmSync(swap);
    symlinkSync(path.join(outside, 'secret'), swap);
    const res = await t.gql(
      `mutation($p: String!) { triggerBuild(project: $p, version: "latest", force: true) { __typename } }`,
      { p: imported.data!.slug },
      token,
    );
    expect(res.errors, JSON.stringify(res)).toBeUndefined();
    const again = await until(
      'the build after the swap',
      async () => {
        const b = await t.db.prisma.build.findFirst({ where: { project: { slug: imported.data!.slug } }, orderBy: { id: 'desc' } });
        return b && b.state === 'finished' && b.success === false ? b : null;
      },
      180_000,
    );
    expect(again.error).toMatch(/a link that leads outside/);
    expect(again.error).toContain(SETTING);
  }, 240_000);
});

describe('without the setting, and through the build firewall', () => {
  let bare: TestApp;
  let bareWorker: Worker;
  let bareToken: string;
  let server: GitServer;
  let daemon: ChildProcess | null = null;

  beforeAll(async () => {
    // No local directories, no private range allowed: an installation as it starts.
    bare = await testApp({ LECTERN_BUILD_NETWORK_ALLOW: '' });
    bareToken = await bare.user('bare');
    bareWorker = await startTestWorker(bare);
    server = await startGitServer();
  }, 120_000);
  afterAll(async () => {
    daemon?.kill('SIGTERM');
    await bareWorker?.stop(1000);
    await server?.close();
    await bare?.close();
  });

  it('a local path is refused, and the message says which setting allows it', async () => {
    const builds = await bare.db.prisma.build.count();
    for (const url of [path.join(allowed, 'docs'), `file://${allowed}/docs.git`]) {
      const r = await importRepo(bare, bareToken, 'Not Allowed', url);
      expect(r.data, url).toBeUndefined();
      const messages = (r.fieldErrors ?? []).find((f) => f.field === 'repository.url')?.messages.join(' ') ?? '';
      expect(messages).toMatch(/Repositories on this machine cannot be built here/);
      expect(messages).toContain(SETTING);
    }
    expect(await bare.db.prisma.build.count()).toBe(builds);
  });

  it('a git daemon on 127.0.0.1: the clone fails naming the address, loopback, and the local setting', async () => {
    const served = path.join(root, 'served');
    mkdirSync(served, { recursive: true });
    git(root, 'clone', '--quiet', '--bare', path.join(allowed, 'docs'), path.join(served, 'docs.git'));
    const port = 30_000 + (process.pid % 20_000);
    daemon = spawn('git', ['daemon', '--export-all', '--reuseaddr', `--base-path=${served}`, '--listen=127.0.0.1', `--port=${port}`, served], {
      stdio: 'ignore',
    });
    await until('git daemon on 127.0.0.1', () => {
      try {
        git(root, 'ls-remote', `git://127.0.0.1:${port}/docs.git`);
        return true;
      } catch {
        return false;
      }
    });
    const imported = await importRepo(bare, bareToken, 'Loopback', `git://127.0.0.1:${port}/docs.git`);
    expect(imported.data?.slug, JSON.stringify(imported)).toBeTruthy();
    const build = await waitForBuild(bare, await latestBuildOf(bare, imported.data!.slug), 180_000);
    expect(build.success).toBe(false);
    expect(build.error).toMatch(/Cloning failed/);
    expect(build.error).toMatch(/The build network refused 127\.0\.0\.1: 127\.0\.0\.1 is loopback/);
    expect(build.error).toContain(SETTING);
  }, 240_000);

  it('a git server on a private address: the clone fails naming the address, its range, and LECTERN_BUILD_NETWORK_ALLOW', async () => {
    const repo = server.repo('private-range', mkdocsFiles());
    const imported = await importRepo(bare, bareToken, 'Private Range', repo.url);
    expect(imported.data?.slug, JSON.stringify(imported)).toBeTruthy();
    const build = await waitForBuild(bare, await latestBuildOf(bare, imported.data!.slug), 180_000);
    expect(build.success).toBe(false);
    const address = new URL(repo.url).hostname;
    expect(build.error).toContain(`The build network refused ${address}: ${address} is in the private range 10.0.0.0/8`);
    expect(build.error).toContain('LECTERN_BUILD_NETWORK_ALLOW');
  }, 240_000);
});
