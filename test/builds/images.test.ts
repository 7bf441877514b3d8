// Builds in build images (docs/design/images.md): Debian 12 and 13 made by `lectern images build`
// from Debian's mirror, a project's `build.os` and `build.tools.python` choosing among them, each
// build printing the Python it ran into its docs; a version no image has failing with what is
// there; `build.apt_packages` installed into the build's own layer (graphviz for
// sphinx.ext.graphviz), gone with the build; hostile package names refused.
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readImage } from '../../src/builds/images.ts';
import type { Worker } from '../../src/builds/worker.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, publishedHtml, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { cliEnv, runCli, show } from '../helpers/cli-process.ts';
import { type GitServer, startGitServer } from '../helpers/git.ts';
import { ensureTestImages } from '../helpers/images.ts';

// Real builds; one installs a Debian package from the mirror.
vi.setConfig({ testTimeout: 300_000 });

let t: TestApp;
let server: GitServer;
let token: string;
let worker: Worker;
let imagesDir: string;

beforeAll(async () => {
  imagesDir = await ensureTestImages(['debian-12', 'debian-13']);
  t = await testApp({ LECTERN_BUILD_IMAGES_DIR: imagesDir });
  server = await startGitServer();
  token = await t.user('imaged');
  worker = await startTestWorker(t, { concurrency: 2 });
}, 30 * 60_000);
afterAll(async () => {
  await worker?.stop(1000);
  await server?.close();
  await t?.close();
});

/** A Sphinx project whose page says which Python built it, with `build` as its .readthedocs.yaml's build section. */
function pythonReporting(build: string[], extra: Record<string, string> = {}): Record<string, string> {
  return {
    '.readthedocs.yaml': ['version: 2', 'build:', ...build.map((l) => `  ${l}`), 'sphinx:', '  configuration: docs/conf.py', ''].join('\n'),
    'docs/conf.py': [
      'import os, sys',
      "project = 'Imaged'",
      "html_theme = 'alabaster'",
      "rst_epilog = '.. |python| replace:: %s\\n.. |image| replace:: %s\\n' % (sys.version.split()[0], os.environ.get('READTHEDOCS_BUILD_IMAGE'))",
      '',
    ].join('\n'),
    'docs/index.rst': 'Imaged\n======\n\nBuilt by Python |python| on |image|.\n',
    ...extra,
  };
}

async function built(name: string, files: Record<string, string>) {
  const repo = server.repo(name.toLowerCase().replace(/\W+/g, '-'), files);
  const p = await importProject(t, token, name, repo.url);
  const build = await waitForBuild(t, await latestBuildOf(t, p.slug), 10 * 60_000);
  return { slug: p.slug, build };
}

describe('lectern images', () => {
  it('lists the images made, with the Python each holds', async () => {
    const r = await runCli(['images', 'list'], cliEnv({ LECTERN_BUILD_IMAGES_DIR: imagesDir, LECTERN_DATA_DIR: t.dataDir }));
    expect(r.code, show(['images', 'list'], r)).toBe(0);
    expect(r.stdout).toMatch(/^debian-13\tDebian trixie\tmade \S+\tpython 3\.13\.\d+/m);
    expect(r.stdout).toMatch(/^debian-12\tDebian bookworm\tmade \S+\tpython 3\.11\.\d+/m);
  });

  it('refuses an image it does not know, and says which it knows', async () => {
    const r = await runCli(['images', 'build', 'ubuntu-24.04'], cliEnv({ LECTERN_BUILD_IMAGES_DIR: imagesDir, LECTERN_DATA_DIR: t.dataDir }));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown image "ubuntu-24.04"; the images are debian-12, debian-13');
  });

  it('says when there is nothing to list, update or remove', async () => {
    const empty = path.join(t.dataDir, 'no-images');
    const env = cliEnv({ LECTERN_BUILD_IMAGES_DIR: empty, LECTERN_DATA_DIR: t.dataDir });
    const list = await runCli(['images', 'list'], env);
    expect(list.stdout).toContain('no build images in');
    const update = await runCli(['images', 'update'], env);
    expect(update.code).toBe(1);
    expect(update.stderr).toContain('no build images to update');
    const remove = await runCli(['images', 'remove', 'debian-12'], env);
    expect(remove.code).toBe(1);
    expect(remove.stderr).toContain('debian-12 is not installed');
  });
});

describe('build.os and build.tools.python', () => {
  it('builds a project asking for Python 3.13 on Debian 13, and says so in its log and its docs', async () => {
    const { slug, build } = await built('Py313', pythonReporting(['os: ubuntu-24.04', 'tools:', '  python: "3.13"']));
    expect(build.error).toBeNull();
    const html = await publishedHtml(t, slug, 'latest', 'index.html');
    expect(html).toMatch(/Built by Python 3\.13\.\d+ on debian-13\./);
    const note = build.commands.find((c) => c.description === 'Build image');
    expect(note?.output).toContain('build.os ubuntu-24.04: the build runs on debian-13 (Debian trixie');
    expect(note?.output).toMatch(/build\.tools\.python: "3\.13" runs python 3\.13\.\d+\./);
    expect(build.config).toMatchObject({
      build: { os: 'ubuntu-24.04', tools: { python: { version: '3.13', full_version: expect.stringMatching(/^3\.13\.\d+$/) } } },
    });
    // Built again, unchanged: the environment made in the image is used as it is.
    const res = await t.http.post(`/api/v3/projects/${slug}/versions/latest/builds/`).set('authorization', `Token ${token}`).send({ force: true });
    const again = await waitForBuild(t, res.body.build.id, 300_000);
    expect(again.error).toBeNull();
    expect(again.commands.find((c) => c.description === 'Reusing the environment')?.output).toContain(`Reusing the environment build #${build.id} made`);
    expect(await publishedHtml(t, slug, 'latest', 'index.html')).toMatch(/Built by Python 3\.13\.\d+ on debian-13\./);
  });

  it('builds a project asking for Python 3.11 on Debian 12', async () => {
    const { slug, build } = await built('Py311', pythonReporting(['os: ubuntu-22.04', 'tools:', '  python: "3.11"']));
    expect(build.error).toBeNull();
    expect(await publishedHtml(t, slug, 'latest', 'index.html')).toMatch(/Built by Python 3\.11\.\d+ on debian-12\./);
  });

  it('fails at once when no image has the Python asked for, naming what there is', async () => {
    const { build } = await built('Py312', pythonReporting(['os: ubuntu-24.04', 'tools:', '  python: "3.12"']));
    expect(build.success).toBe(false);
    expect(build.error).toBe(
      'build.tools.python: Python 3.12 is not available on debian-13, which has Python 3.13 ("3.13" or "3"). The images Lectern makes have debian-12, debian-13\'s Pythons. Other versions come from a directory of relocatable Pythons (LECTERN_BUILD_TOOLS_DIR).',
    );
    expect(build.commands.map((c) => c.command)).not.toContainEqual(expect.stringContaining('sphinx'));
  });

  it('points to the image that has the Python asked for', async () => {
    const { build } = await built('Py311on24', pythonReporting(['os: ubuntu-24.04', 'tools:', '  python: "3.11"']));
    expect(build.success).toBe(false);
    expect(build.error).toContain('debian-12 has it: set build.os to "ubuntu-22.04".');
  });

  it('refuses an operating system it does not know', async () => {
    const { build } = await built('Centos', pythonReporting(['os: centos-7', 'tools:', '  python: "3"']));
    expect(build.success).toBe(false);
    expect(build.error).toContain('build.os: "centos-7" is not an operating system Lectern builds on');
  });
});

describe('a tool directory (LECTERN_BUILD_TOOLS_DIR)', () => {
  let tools: string;
  let t2: TestApp;
  let worker2: Worker;
  beforeAll(async () => {
    // A relocatable Python 3.11, laid out as python-build-standalone's install_only archives are
    // (bin/python3, lib/python3.11/), here made of Debian 12's own: run on Debian 13, whose Python is 3.13.
    const d12 = (await readImage(imagesDir, 'debian-12'))!;
    tools = mkdtempSync(path.join(os.tmpdir(), 'lectern-tools-'));
    const version = d12.tools.python;
    const home = path.join(tools, 'python', version);
    mkdirSync(path.join(home, 'bin'), { recursive: true });
    mkdirSync(path.join(home, 'lib'));
    cpSync(path.join(d12.rootfs, 'usr/bin/python3.11'), path.join(home, 'bin/python3.11'));
    symlinkSync('python3.11', path.join(home, 'bin/python3'));
    cpSync(path.join(d12.rootfs, 'usr/lib/python3.11'), path.join(home, 'lib/python3.11'), { recursive: true, verbatimSymlinks: true });
    t2 = await testApp({ LECTERN_BUILD_IMAGES_DIR: imagesDir, LECTERN_BUILD_TOOLS_DIR: tools });
    worker2 = await startTestWorker(t2);
  });
  afterAll(async () => {
    await worker2?.stop(1000);
    await t2?.close();
    rmSync(tools, { recursive: true, force: true });
  });

  it('builds with its Python a version the image has not, bound read-only, and says where it came from', async () => {
    const token2 = await t2.user('tooled');
    const repo = server.repo('tooled', {
      '.readthedocs.yaml': [
        'version: 2',
        'build:',
        '  os: ubuntu-24.04',
        '  tools: {python: "3.11"}',
        '  commands:',
        '    - mkdir -p $READTHEDOCS_OUTPUT/html',
        "    - python -c \"import sys; print('<p>Python', sys.version.split()[0], 'at', sys.base_prefix, '</p>')\" > $READTHEDOCS_OUTPUT/html/index.html",
        '    - touch "$(python -c \'import sys; print(sys.base_prefix)\')/x" 2>/dev/null || echo "tool directory read-only"',
        '',
      ].join('\n'),
    });
    const p = await importProject(t2, token2, 'Tooled', repo.url);
    const build = await waitForBuild(t2, await latestBuildOf(t2, p.slug), 300_000);
    expect(build.error).toBeNull();
    const d12 = (await readImage(imagesDir, 'debian-12'))!;
    const where = path.join(tools, 'python', d12.tools.python);
    expect(await publishedHtml(t2, p.slug, 'latest', 'index.html')).toBe(`<p>Python ${d12.tools.python} at ${where} </p>\n`);
    expect(build.commands.find((c) => c.description === 'Build image')?.output).toContain(
      `build.tools.python: "3.11" runs python ${d12.tools.python} (from the tool directory, ${where}).`,
    );
    expect(build.commands.find((c) => c.command.startsWith('touch'))?.output).toBe('tool directory read-only\n');
    expect(existsSync(path.join(where, 'x'))).toBe(false);
  });
});

describe('build.apt_packages', () => {
  it('installs graphviz into the build own layer for sphinx.ext.graphviz; the image and the next build do not have it', async () => {
    const files = pythonReporting(['os: ubuntu-22.04', 'tools:', '  python: "3"', 'apt_packages:', '  - graphviz'], {
      'docs/index.rst': 'Graph\n=====\n\n.. graphviz::\n\n   digraph lectern { reader -> docs }\n',
    });
    files['docs/conf.py'] += "extensions = ['sphinx.ext.graphviz']\ngraphviz_output_format = 'svg'\n";
    const { slug, build } = await built('Graphs', files);
    expect(build.error).toBeNull();
    const install = build.commands.find((c) => c.command.startsWith('apt-get') && c.command.includes(' install '));
    expect(install?.command).toMatch(/apt-get .*install --assume-yes --quiet --no-install-recommends -- graphviz$/);
    expect(install?.output).toContain('Setting up graphviz');
    const html = await publishedHtml(t, slug, 'latest', 'index.html');
    const svg = /<object data="(_images\/graphviz-[0-9a-f]+\.svg)" type="image\/svg\+xml"/.exec(html ?? '');
    expect(svg, html ?? '').not.toBeNull();
    // dot drew it: the graph's nodes are in the published SVG.
    expect(await publishedHtml(t, slug, 'latest', svg![1]!)).toMatch(/<svg[\s\S]*>reader<\/text>[\s\S]*>docs<\/text>/);
    // The layer went with the build; the image itself never had dot.
    expect(existsSync(path.join(t.dataDir, 'builds', `${build.id}.layer`))).toBe(false);
    const image = (await import('../../src/builds/images.ts')).readImage(imagesDir, 'debian-12');
    expect(existsSync(path.join((await image)!.rootfs, 'usr/bin/dot'))).toBe(false);
    const next = await built(
      'No graphs',
      pythonReporting(['os: ubuntu-22.04', 'tools:', '  python: "3"', 'jobs:', '  pre_build:', '    - "command -v dot || echo no dot here"']),
    );
    expect(next.build.commands.find((c) => c.command.includes('command -v dot'))?.output).toContain('no dot here');
  });

  it('refuses names that are options, paths or URLs before anything runs', async () => {
    for (const name of ['-oAPT::Update::Pre-Invoke::=id', '/tmp/evil.deb', 'http://evil.example/x.deb', 'graphviz;id', '../x']) {
      const { build } = await built(
        `Hostile ${Math.random().toString(36).slice(2, 8)}`,
        pythonReporting(['os: ubuntu-22.04', 'apt_packages:', `  - ${JSON.stringify(name)}`]),
      );
      expect(build.success, name).toBe(false);
      expect(build.error, name).toMatch(/build\.apt_packages\[0\]/);
      expect(build.commands.map((c) => c.command).join('\n'), name).not.toContain('apt-get');
    }
  });
});
