// Real builds end to end: repositories served by git daemon on 127.0.0.1, imported through
// GraphQL, built by a worker with the machine's git, venv, pip, Sphinx and MkDocs, published to
// storage; what a user checks is the build's state, error, commands and the files served.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { artifactPrefix, downloadKey } from '../../src/storage/artifacts.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, mkdocsFiles, publishedHtml, sphinxFiles, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { type GitServer, git, startGitServer } from '../helpers/git.ts';

let t: TestApp;
let server: GitServer;
let token: string;
let worker: Worker;

beforeAll(async () => {
  t = await testApp();
  server = await startGitServer();
  token = await t.user('builder');
  worker = await startTestWorker(t, { concurrency: 2 });
});
afterAll(async () => {
  await worker?.stop(1000);
  await server?.close();
  await t?.close();
});

async function setVariable(projectSlug: string, name: string, value: string) {
  const res = await t.gql(
    `mutation($p: String!, $n: String!, $v: String!) { createEnvironmentVariable(project: $p, input: {name: $n, value: $v}) { __typename ... on Error { message } } }`,
    { p: projectSlug, n: name, v: value },
    token,
  );
  expect(res.data.createEnvironmentVariable.__typename, JSON.stringify(res.data)).not.toMatch(/Error/);
}

async function trigger(projectSlug: string, versionSlug = 'latest'): Promise<number> {
  const res = await t.http.post(`/api/v3/projects/${projectSlug}/versions/${versionSlug}/builds/`).set('authorization', `Token ${token}`);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.build.id as number;
}

describe('a Sphinx project with a .readthedocs.yaml, a local package and offline formats', () => {
  let projectSlug: string;
  let buildId: number;
  beforeAll(async () => {
    const repo = server.repo(
      'sphinx-full',
      sphinxFiles({
        '.readthedocs.yaml': [
          'version: 2',
          'formats: [htmlzip, epub]',
          'python:',
          '  install:',
          '    - requirements: docs/requirements.txt',
          'sphinx:',
          '  configuration: docs/conf.py',
          '',
        ].join('\n'),
        'docs/requirements.txt': './localext\n',
        'localext/setup.py': "from setuptools import setup\nsetup(name='fixture-ext', version='1.0', packages=['fixture_ext'])\n",
        'localext/fixture_ext/__init__.py':
          "def setup(app):\n    app.add_js_file(None, body='/* fixture_ext was here */')\n    return {'version': '1.0', 'parallel_read_safe': True}\n",
        'docs/conf.py': "project = 'Fixture'\nextensions = ['fixture_ext']\nhtml_theme = 'alabaster'\n",
      }),
    );
    const p = await importProject(t, token, 'Sphinx Full', repo.url);
    projectSlug = p.slug;
    buildId = await latestBuildOf(t, projectSlug);
  });

  it('the build queued by the import finishes successfully, with its commit and normalized config', async () => {
    const build = await waitForBuild(t, buildId);
    expect(build.error).toBeNull();
    expect(build.success).toBe(true);
    expect(build.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(build.config).toMatchObject({ version: '2', formats: ['htmlzip', 'epub'], sphinx: { configuration: 'docs/conf.py', builder: 'sphinx' } });
    expect(build.duration).toBeGreaterThanOrEqual(0);
  });

  it('records every step as a command with its output and exit code, in order', async () => {
    const build = await waitForBuild(t, buildId);
    const commands = build.commands.map((c) => c.command);
    const index = (re: RegExp) => commands.findIndex((c) => re.test(c));
    const order = [
      /^git clone/,
      /^cat -- \.readthedocs\.yaml/,
      /venv/,
      /pip install .*-r docs\/requirements\.txt/,
      /sphinx -T .*-b html/,
      /-b singlehtml/,
      /-b epub/,
    ];
    const positions = order.map(index);
    expect(
      positions.every((i) => i >= 0),
      commands.join('\n'),
    ).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    for (const c of build.commands) {
      expect(c.exitCode, c.command).toBe(0);
      expect(c.endTime).not.toBeNull();
    }
    const pip = build.commands[index(/pip install/)]!;
    expect(pip.output).toContain('fixture-ext');
    // Paths inside the build directory are shown relative to the checkout, as Read the Docs does.
    expect(commands.join('\n')).not.toContain(t.dataDir);
  });

  it('publishes the HTML (made with the local extension) and the offline formats', async () => {
    await waitForBuild(t, buildId);
    const index = await publishedHtml(t, projectSlug, 'latest', 'index.html');
    expect(index).toContain('Welcome.');
    expect(index).toContain('fixture_ext was here');
    expect(await publishedHtml(t, projectSlug, 'latest', 'guide.html')).toContain('Use it.');
    const v = await t.db.prisma.version.findFirstOrThrow({ where: { project: { slug: projectSlug }, slug: 'latest' } });
    expect(v).toMatchObject({ built: true, hasHtmlzip: true, hasEpub: true, hasPdf: false });
    const zip = await t.storage.head(downloadKey(projectSlug, 'latest', v.publishedBuildId!, 'htmlzip'));
    const epub = await t.storage.head(downloadKey(projectSlug, 'latest', v.publishedBuildId!, 'epub'));
    expect(zip?.size).toBeGreaterThan(1000);
    expect(epub?.size).toBeGreaterThan(1000);
  });

  it('the REST API shows the build finished and the version built', async () => {
    await waitForBuild(t, buildId);
    const res = await t.http.get(`/api/v3/projects/${projectSlug}/builds/${buildId}/`).set('authorization', `Token ${token}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ state: { code: 'finished', name: 'Finished' }, success: true, error: null, version: 'latest' });
    const v = await t.http.get(`/api/v3/projects/${projectSlug}/versions/latest/`).set('authorization', `Token ${token}`);
    expect(v.body.built).toBe(true);
  });

  it('a second build replaces the served files all at once and removes the old ones', async () => {
    const first = (await t.db.prisma.version.findFirstOrThrow({ where: { project: { slug: projectSlug }, slug: 'latest' } })).publishedBuildId!;
    const second = await trigger(projectSlug);
    const build = await waitForBuild(t, second);
    expect(build.success, build.error ?? '').toBe(true);
    const v = await t.db.prisma.version.findFirstOrThrow({ where: { project: { slug: projectSlug }, slug: 'latest' } });
    expect(v.publishedBuildId).toBe(second);
    expect(await t.storage.list(`${artifactPrefix(projectSlug, 'latest', first, 'html')}/`)).toEqual([]);
    expect(await publishedHtml(t, projectSlug, 'latest', 'index.html')).toContain('Welcome.');
  });
});

describe('an MkDocs project without a configuration file', () => {
  it('is detected by its mkdocs.yml and built with MkDocs', async () => {
    const repo = server.repo('mkdocs-plain', mkdocsFiles());
    const p = await importProject(t, token, 'MkDocs Plain', repo.url);
    const build = await waitForBuild(t, await latestBuildOf(t, p.slug));
    expect(build.success, build.error ?? '').toBe(true);
    expect(build.config).toMatchObject({ mkdocs: { configuration: 'mkdocs.yml' } });
    expect(build.commands.map((c) => c.command).join('\n')).toMatch(/mkdocs build/);
    expect(await publishedHtml(t, p.slug, 'latest', 'index.html')).toContain('Hello from MkDocs.');
    expect(await publishedHtml(t, p.slug, 'latest', 'about/index.html')).toContain('About page.');
  });
});

describe('Sphinx builders and submodules', () => {
  it('sphinx.builder dirhtml publishes one directory per page', async () => {
    const repo = server.repo('dirhtml', sphinxFiles({ '.readthedocs.yaml': 'version: 2\nsphinx:\n  configuration: docs/conf.py\n  builder: dirhtml\n' }));
    const p = await importProject(t, token, 'Dirhtml', repo.url);
    const build = await waitForBuild(t, await latestBuildOf(t, p.slug));
    expect(build.success, build.error ?? '').toBe(true);
    expect(build.commands.map((c) => c.command).join('\n')).toMatch(/-b dirhtml/);
    expect(await publishedHtml(t, p.slug, 'latest', 'guide/index.html')).toContain('Use it.');
    expect(await publishedHtml(t, p.slug, 'latest', 'guide.html')).toBeNull();
  });

  it('submodules: include all checks them out before building', async () => {
    const sub = server.repo('sub-content', { 'part.rst': 'Part\n====\n\nFrom the submodule.\n' });
    const repo = server.repo(
      'with-submodule',
      sphinxFiles({
        '.readthedocs.yaml': 'version: 2\nsphinx:\n  configuration: docs/conf.py\nsubmodules:\n  include: all\n',
        'docs/index.rst': 'Fixture\n=======\n\n.. toctree::\n\n   guide\n   external/part\n',
      }),
    );
    git(repo.work, 'submodule', 'add', '--quiet', sub.url, 'docs/external');
    repo.commit({}, 'add submodule');
    git(repo.work, 'push', '--quiet', 'origin', 'main');
    const p = await importProject(t, token, 'With Submodule', repo.url);
    const build = await waitForBuild(t, await latestBuildOf(t, p.slug));
    expect(build.success, build.error ?? '').toBe(true);
    expect(build.commands.map((c) => c.command).join('\n')).toMatch(/git submodule update --init/);
    expect(await publishedHtml(t, p.slug, 'latest', 'external/part.html')).toContain('From the submodule.');
  });
});

describe('build.jobs', () => {
  it("runs each job at its step, in order, with the build's environment; build.jobs.build.html replaces the builder", async () => {
    const repo = server.repo('with-jobs', {
      '.readthedocs.yaml': [
        'version: 2',
        'formats: [epub, htmlzip]',
        'build:',
        '  os: ubuntu-24.04',
        '  tools: {python: "3"}',
        '  jobs:',
        '    post_checkout: [echo "job post_checkout $READTHEDOCS_GIT_COMMIT_HASH"]',
        '    pre_install: [echo "job pre_install"]',
        '    post_install:',
        '      - python -c "import sys; print(\'job post_install\', sys.prefix)"',
        '    pre_build: [echo "job pre_build"]',
        '    build:',
        '      html:',
        '        - mkdir -p $READTHEDOCS_OUTPUT/html',
        '        - echo "<h1>made by a job</h1>" > $READTHEDOCS_OUTPUT/html/index.html',
        '      epub:',
        '        - mkdir -p $READTHEDOCS_OUTPUT/epub',
        '        - echo "not really an epub" > $READTHEDOCS_OUTPUT/epub/book.epub',
        '      htmlzip:',
        '        - mkdir -p $READTHEDOCS_OUTPUT/htmlzip',
        '        - echo "not really a zip" > $READTHEDOCS_OUTPUT/htmlzip/site.zip',
        '    post_build: [ls $READTHEDOCS_OUTPUT/html]',
        '',
      ].join('\n'),
    });
    const p = await importProject(t, token, 'With Jobs', repo.url);
    const build = await waitForBuild(t, await latestBuildOf(t, p.slug));
    expect(build.success, build.error ?? '').toBe(true);
    const jobs = build.commands.filter((c) => c.description.startsWith('build.jobs.')).map((c) => c.description);
    expect(jobs).toEqual([
      'build.jobs.post_checkout',
      'build.jobs.pre_install',
      'build.jobs.post_install',
      'build.jobs.pre_build',
      'build.jobs.build.html',
      'build.jobs.build.html',
      'build.jobs.build.epub',
      'build.jobs.build.epub',
      'build.jobs.build.htmlzip',
      'build.jobs.build.htmlzip',
      'build.jobs.post_build',
    ]);
    const output = (name: string) => build.commands.find((c) => c.description === `build.jobs.${name}`)!.output;
    expect(output('post_checkout')).toContain(`job post_checkout ${build.commit}`);
    expect(output('post_install')).toMatch(/job post_install .*venv/);
    expect(output('post_build')).toContain('index.html');
    expect(build.commands.some((c) => /sphinx|mkdocs build/.test(c.command))).toBe(false);
    expect(await publishedHtml(t, p.slug, 'latest', 'index.html')).toContain('made by a job');
    const v = await t.db.prisma.version.findFirstOrThrow({ where: { projectId: p.id, slug: 'latest' } });
    expect(v.hasEpub).toBe(true);
    // The project's own htmlzip is the one published (Sphinx's is zipped by Lectern elsewhere).
    expect(v.hasHtmlzip).toBe(true);
  });

  it('a failing job fails the build, naming the job and its command', async () => {
    const repo = server.repo(
      'failing-job',
      sphinxFiles({
        '.readthedocs.yaml':
          'version: 2\nsphinx:\n  configuration: docs/conf.py\nbuild:\n  os: ubuntu-24.04\n  tools: {python: "3"}\n  jobs:\n    pre_build: ["echo broken on purpose; exit 3"]\n',
      }),
    );
    const p = await importProject(t, token, 'Failing Job', repo.url);
    const build = await waitForBuild(t, await latestBuildOf(t, p.slug));
    expect(build.success).toBe(false);
    expect(build.error).toMatch(/^build\.jobs\.pre_build failed: `echo broken on purpose; exit 3` exited with code 3\.\nbroken on purpose/);
  });
});

describe('offline formats', () => {
  it('a format the machine cannot make (pdf without LaTeX) is left out with a message; the build succeeds', async () => {
    const { existsSync } = await import('node:fs');
    const repo = server.repo('wants-pdf', sphinxFiles({ '.readthedocs.yaml': 'version: 2\nformats: [pdf]\nsphinx:\n  configuration: docs/conf.py\n' }));
    const p = await importProject(t, token, 'Wants PDF', repo.url);
    const build = await waitForBuild(t, await latestBuildOf(t, p.slug));
    expect(build.success, build.error ?? '').toBe(true);
    const v = await t.db.prisma.version.findFirstOrThrow({ where: { projectId: p.id, slug: 'latest' } });
    if (existsSync('/usr/bin/latexmk')) {
      expect(v.hasPdf).toBe(true);
    } else {
      expect(v.hasPdf).toBe(false);
      const note = build.commands.find((c) => c.description === 'pdf skipped');
      expect(note?.output).toMatch(/The pdf download was not made: PDF needs LaTeX/);
    }
  });
});

describe('build.commands', () => {
  it('replaces the default steps; output is taken from $READTHEDOCS_OUTPUT/html; variables reach it masked', async () => {
    const repo = server.repo('custom-commands', {
      '.readthedocs.yaml': [
        'version: 2',
        'build:',
        '  os: ubuntu-22.04',
        '  tools: {python: "3.11"}',
        '  commands:',
        '    - mkdir -p $READTHEDOCS_OUTPUT/html',
        '    - echo "<h1>custom $READTHEDOCS_PROJECT $READTHEDOCS_VERSION</h1>" > $READTHEDOCS_OUTPUT/html/index.html',
        '    - echo "the token is $DEPLOY_TOKEN"',
        '# s3cr3t-value-42 (pasted here by mistake: the log shows the file masked)',
        '',
      ].join('\n'),
    });
    const p = await importProject(t, token, 'Custom Commands', repo.url);
    // The import's build may already run; the variable is set before the build this test triggers.
    await waitForBuild(t, await latestBuildOf(t, p.slug));
    await setVariable(p.slug, 'DEPLOY_TOKEN', 's3cr3t-value-42');
    const build = await waitForBuild(t, await trigger(p.slug));
    expect(build.success, build.error ?? '').toBe(true);
    const echo = build.commands.find((c) => c.command.includes('the token is'))!;
    expect(echo.output).toContain('the token is *****');
    expect(build.commands.find((c) => c.command === 'cat -- .readthedocs.yaml')?.output).toContain('# ***** (pasted here by mistake');
    const everything = JSON.stringify(build);
    expect(everything).not.toContain('s3cr3t-value-42');
    expect(build.commands.map((c) => c.command).join('\n')).not.toMatch(/sphinx|mkdocs build/);
    expect(await publishedHtml(t, p.slug, 'latest', 'index.html')).toContain('<h1>custom custom-commands latest</h1>');
    // Nor through the API, which shows commands (v2) and builds.
    const res = await t.gql(`query($id: Int!) { build(id: $id) { commands { command output } } }`, { id: build.id }, token);
    expect(JSON.stringify(res.data)).not.toContain('s3cr3t-value-42');
  }, 120_000); // two builds (the import's and this one): 30 s was hit with the machine's two cores busy
});

describe('failures a person can act on', () => {
  it('a broken conf.py ends the build finished, unsuccessful, naming the step, the command and the last lines', async () => {
    const repo = server.repo('broken-conf', sphinxFiles({ 'docs/conf.py': "project = 'Broken'\nraise RuntimeError('conf.py exploded on purpose')\n" }));
    const p = await importProject(t, token, 'Broken Conf', repo.url);
    const build = await waitForBuild(t, await latestBuildOf(t, p.slug));
    expect(build.state).toBe('finished');
    expect(build.success).toBe(false);
    expect(build.error).toMatch(/^Building failed: `.*sphinx.*-b html.*` exited with code \d+\./);
    expect(build.error).toContain('conf.py exploded on purpose');
    const v = await t.db.prisma.version.findFirstOrThrow({ where: { projectId: p.id, slug: 'latest' } });
    expect(v.built).toBe(false);
    expect(v.publishedBuildId).toBeNull();
  });

  it("a repository that cannot be cloned fails at cloning with git's message", async () => {
    const p = await importProject(t, token, 'Gone Repo', `${server.url}/does-not-exist.git`);
    const build = await waitForBuild(t, await latestBuildOf(t, p.slug));
    expect(build.success).toBe(false);
    expect(build.error).toMatch(/^Cloning failed: `git clone/);
    expect(build.error).toMatch(/does-not-exist|not found|fatal/i);
  });

  it('a repository with no documentation says so', async () => {
    const repo = server.repo('no-docs', { 'README.md': '# nothing to build\n' });
    const p = await importProject(t, token, 'No Docs', repo.url);
    const build = await waitForBuild(t, await latestBuildOf(t, p.slug));
    expect(build.success).toBe(false);
    expect(build.error).toMatch(/conf\.py|mkdocs\.yml/);
  });
});

describe('versions follow the repository', () => {
  it('a build syncs branches and tags; stable moves to the highest release and is built', async () => {
    const repo = server.repo('tagged', sphinxFiles());
    git(repo.work, 'tag', '1.0');
    git(repo.work, 'push', '--quiet', 'origin', '--tags');
    const p = await importProject(t, token, 'Tagged', repo.url);
    const first = await waitForBuild(t, await latestBuildOf(t, p.slug));
    expect(first.success, `${first.error}\n${first.commands.map((c) => `${c.command}\n${c.output}`).join('\n')}`).toBe(true);
    const stable1 = await t.db.prisma.version.findFirstOrThrow({ where: { projectId: p.id, slug: 'stable' } });
    expect(stable1.identifier).toBe(git(repo.work, 'rev-parse', '1.0'));
    const stableBuild1 = await waitForBuild(t, await latestBuildOf(t, p.slug, 'stable'));
    expect(stableBuild1.success, stableBuild1.error ?? '').toBe(true);

    const c2 = repo.commit({ 'docs/index.rst': 'Fixture\n=======\n\nRelease two.\n\n.. toctree::\n\n   guide\n' }, 'release 2');
    git(repo.work, 'tag', '2.0');
    git(repo.work, 'push', '--quiet', 'origin', 'main', '--tags');
    await waitForBuild(t, await trigger(p.slug));
    const stable2 = await t.db.prisma.version.findFirstOrThrow({ where: { projectId: p.id, slug: 'stable' } });
    expect(stable2.identifier).toBe(c2);
    const stableBuild2 = await waitForBuild(t, await latestBuildOf(t, p.slug, 'stable'));
    expect(stableBuild2.id).not.toBe(stableBuild1.id);
    expect(stableBuild2.success, stableBuild2.error ?? '').toBe(true);
    expect(stableBuild2.commit).toBe(c2);
    expect(await publishedHtml(t, p.slug, 'stable', 'index.html')).toContain('Release two.');
    // The tag itself is a version too, built when activated.
    expect(await t.db.prisma.version.count({ where: { projectId: p.id, slug: '2.0' } })).toBe(1);
  });
});
