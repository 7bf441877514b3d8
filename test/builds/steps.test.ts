// A build's steps one at a time (src/builds/steps/, docs/design/builds.md "Steps"), each run on a
// BuildRun of a real build row, a real repository served by git daemon and the real sandbox: what
// each leaves for the next and what a person sees of it (the build's row and log), where
// test/builds/pipeline.test.ts runs whole builds.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Aborted, BuildRun, Skipped, StepFailed } from '../../src/builds/run.ts';
import { buildDocs } from '../../src/builds/steps/build.ts';
import { clone } from '../../src/builds/steps/clone.ts';
import { configure } from '../../src/builds/steps/configure.ts';
import { install } from '../../src/builds/steps/install.ts';
import { prepare } from '../../src/builds/steps/prepare.ts';
import { publish } from '../../src/builds/steps/publish.ts';
import { Cipher } from '../../src/secrets.ts';
import { TEST_SECRET_KEY, type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, pipelineDeps, publishedHtml } from '../helpers/builds.ts';
import { type GitServer, git, startGitServer } from '../helpers/git.ts';

let t: TestApp;
let server: GitServer;
let token: string;

beforeAll(async () => {
  t = await testApp();
  server = await startGitServer();
  token = await t.user('stepper');
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

const YAML = 'version: 2\nsphinx:\n  configuration: docs/conf.py\n';
const FILES = { '.readthedocs.yaml': YAML, 'docs/conf.py': "project = 'Steps'\n", 'docs/index.rst': 'Steps\n=====\n' };

/** A BuildRun of the newest build of `name`'s latest version (imported from a new repository of `files`). */
async function runOf(name: string, files: Record<string, string> = FILES, opts: { force?: boolean } = {}) {
  const repo = server.repo(name.toLowerCase(), files);
  const p = await importProject(t, token, name, repo.url);
  return { repo, project: p, run: await buildRun(p.slug, opts) };
}

async function buildRun(slug: string, opts: { force?: boolean } = {}): Promise<BuildRun> {
  const id = await latestBuildOf(t, slug);
  const build = await t.db.prisma.build.update({ where: { id }, data: { force: opts.force ?? false } });
  const project = await t.db.prisma.project.findUniqueOrThrow({ where: { id: build.projectId } });
  const version = await t.db.prisma.version.findUniqueOrThrow({ where: { id: build.versionId! } });
  const variables = await t.db.prisma.environmentVariable.findMany({ where: { projectId: project.id } });
  return new BuildRun(pipelineDeps(t), build, new AbortController().signal, project, version, variables);
}

describe('a build, step by step', () => {
  it('prepare: an empty directory of the build’s own, and a variable left out named in the log', async () => {
    const { project } = await runOf('Prepared');
    // A row made before the rule on names existed: LD_PRELOAD would change how every program loads.
    const cipher = new Cipher(TEST_SECRET_KEY);
    await t.db.prisma.environmentVariable.create({
      data: { projectId: project.id, name: 'LD_PRELOAD', valueEncrypted: cipher.encrypt('/tmp/evil.so'), valueSize: 12 },
    });
    const r = await buildRun(project.slug);
    mkdirSync(r.workdir, { recursive: true });
    writeFileSync(path.join(r.workdir, 'left-over'), 'from an earlier attempt');
    await prepare(r);
    expect(existsSync(path.join(r.workdir, 'left-over'))).toBe(false);
    expect(existsSync(r.home)).toBe(true);
    expect(r.env).not.toHaveProperty('LD_PRELOAD');
    const notes = await t.db.prisma.buildCommand.findMany({ where: { buildId: r.build.id } });
    expect(notes.map((n) => n.output).join('')).toMatch(/environment variable LD_PRELOAD was left out of this build/);
    expect(notes.map((n) => n.output).join('')).not.toContain('/tmp/evil.so');
  });

  it('clone: the branch’s commit checked out and recorded, as the build’s commit and READTHEDOCS_GIT_COMMIT_HASH', async () => {
    const { repo, run: r } = await runOf('Cloned');
    const head = repo.commit({ 'docs/index.rst': 'Steps\n=====\n\nA second commit.\n' }, 'second');
    git(repo.work, 'push', '--quiet', 'origin', 'main');
    await prepare(r);
    await clone(r);
    expect(r.commit).toBe(head);
    expect(r.rtdEnv.READTHEDOCS_GIT_COMMIT_HASH).toBe(head);
    expect(readFileSync(path.join(r.checkout, 'docs/index.rst'), 'utf8')).toContain('A second commit.');
    expect((await t.db.prisma.build.findUniqueOrThrow({ where: { id: r.build.id } })).commit).toBe(head);
    const log = await t.db.prisma.buildCommand.findMany({ where: { buildId: r.build.id }, orderBy: { id: 'asc' } });
    expect(log.map((c) => c.description)).toEqual(['git clone']); // rev-parse is Lectern's own, not shown
  });

  it('configure: the configuration read and recorded; what the version already serves is skipped unless forced', async () => {
    const { project, run: r } = await runOf('Configured');
    await prepare(r);
    await clone(r);
    await configure(r);
    expect(r.config.sphinx?.configuration).toBe('docs/conf.py');
    const row = await t.db.prisma.build.findUniqueOrThrow({ where: { id: r.build.id }, include: { commands: true } });
    expect(row.readthedocsYamlPath).toBe('.readthedocs.yaml');
    expect(row.config).toMatchObject({ sphinx: { configuration: 'docs/conf.py' } });
    // Shown as Read the Docs shows it, `cat` of the file, though Lectern read it itself (no sandbox for it).
    expect(row.commands.find((c) => c.description === 'cat')).toMatchObject({
      command: 'cat -- .readthedocs.yaml',
      exitCode: 0,
      output: FILES['.readthedocs.yaml'],
    });

    // As if that build had been published: the same commit, configuration and variables again.
    await t.db.prisma.build.update({ where: { id: r.build.id }, data: { success: true, state: 'finished' } });
    await t.db.prisma.version.update({ where: { id: r.version.id }, data: { built: true, publishedBuildId: r.build.id } });
    const again = await t.db.prisma.build.create({
      data: { projectId: project.id, versionId: r.version.id, versionSlug: r.version.slug, state: 'triggered' },
    });
    const next = await buildRun(project.slug);
    expect(next.build.id).toBe(again.id);
    await prepare(next);
    await clone(next);
    const skipped = await configure(next).catch((e: unknown) => e);
    expect(skipped).toBeInstanceOf(Skipped);
    expect((skipped as Error).message).toMatch(new RegExp(`already built and published \\(build #${r.build.id}\\)`));
    const forced = await buildRun(project.slug, { force: true });
    await prepare(forced);
    await clone(forced);
    await expect(configure(forced)).resolves.toBeUndefined();
  });

  it('configure: a configuration that cannot be read fails the step naming the problem', async () => {
    const { run: r } = await runOf('Misconfigured', { ...FILES, '.readthedocs.yaml': 'version: 2\nsphinx: [not, a, mapping]\n' });
    await prepare(r);
    await clone(r);
    const failed = await configure(r).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(StepFailed);
    expect((failed as Error).message).toMatch(/^Reading the build configuration failed: .*sphinx/);
  });

  it('install: a virtual environment the later steps run in, in the installing state', { timeout: 120_000 }, async () => {
    const { run: r } = await runOf('Installed');
    await prepare(r);
    await clone(r);
    await configure(r);
    await install(r);
    expect(existsSync(path.join(r.venvOnHost, 'bin', 'python'))).toBe(true);
    expect((await t.db.prisma.build.findUniqueOrThrow({ where: { id: r.build.id } })).state).toBe('installing');
    const log = await t.db.prisma.buildCommand.findMany({ where: { buildId: r.build.id }, orderBy: { id: 'asc' } });
    expect(log.map((c) => c.description)).toContain('python -m venv');
  });

  it('build: Sphinx writes the HTML into $READTHEDOCS_OUTPUT/html, in the building state', { timeout: 120_000 }, async () => {
    const { run: r } = await runOf('Built');
    for (const step of [prepare, clone, configure, install, buildDocs]) await step(r);
    expect(readFileSync(path.join(r.output, 'html', 'index.html'), 'utf8')).toContain('Steps');
    expect((await t.db.prisma.build.findUniqueOrThrow({ where: { id: r.build.id } })).state).toBe('building');
    const log = await t.db.prisma.buildCommand.findMany({ where: { buildId: r.build.id }, orderBy: { id: 'asc' } });
    expect(log.map((c) => c.description)).toContain('sphinx-build -b html');
  });

  it('build: output with no index.html at its root fails the step, saying where it was looked for', async () => {
    const { run: r } = await runOf('Indexless', {
      '.readthedocs.yaml': OWN_COMMANDS(['mkdir -p $READTHEDOCS_OUTPUT/html/sub', 'echo hi > $READTHEDOCS_OUTPUT/html/sub/index.html']),
    });
    for (const step of [prepare, clone, configure, install]) await step(r);
    const failed = await buildDocs(r).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(StepFailed);
    expect((failed as Error).message).toBe('Building failed: the HTML output has no index.html at its root ($READTHEDOCS_OUTPUT/html).');
  });

  it("publish: the version serves the build's HTML once published, and not before", async () => {
    const { project, run: r } = await runOf('Published', { '.readthedocs.yaml': OWN_COMMANDS(WRITE_INDEX) });
    for (const step of [prepare, clone, configure, install, buildDocs]) await step(r);
    expect(await publishedHtml(t, project.slug, 'latest', 'index.html')).toBeNull();
    await publish(r);
    expect(await publishedHtml(t, project.slug, 'latest', 'index.html')).toContain('made by build.commands');
    const version = await t.db.prisma.version.findFirstOrThrow({ where: { projectId: project.id, slug: 'latest' } });
    expect({ built: version.built, publishedBuildId: version.publishedBuildId }).toEqual({ built: true, publishedBuildId: r.build.id });
  });

  it('publish: a build cancelled while it ran publishes nothing', async () => {
    const { project, run: r } = await runOf('Cancelled', { '.readthedocs.yaml': OWN_COMMANDS(WRITE_INDEX) });
    for (const step of [prepare, clone, configure, install, buildDocs]) await step(r);
    // Cancelling finishes the build's row; the worker running it finds out at its next step.
    await t.db.prisma.build.update({ where: { id: r.build.id }, data: { state: 'finished', success: false, error: 'Cancelled.' } });
    await expect(publish(r)).rejects.toBeInstanceOf(Aborted);
    expect(await publishedHtml(t, project.slug, 'latest', 'index.html')).toBeNull();
    expect((await t.db.prisma.version.findFirstOrThrow({ where: { projectId: project.id, slug: 'latest' } })).built).toBe(false);
  });
});

/** A configuration whose `build.commands` replace every step Lectern would run (no environment installed). */
const OWN_COMMANDS = (commands: string[]) =>
  `version: 2\nbuild:\n  os: ubuntu-24.04\n  tools: {python: "3"}\n  commands:\n${commands.map((c) => `    - ${JSON.stringify(c)}\n`).join('')}`;
const WRITE_INDEX = ['mkdir -p $READTHEDOCS_OUTPUT/html', 'echo "<h1>made by build.commands</h1>" > $READTHEDOCS_OUTPUT/html/index.html'];
