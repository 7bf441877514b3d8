// `python.install` with `method: uv` (docs/design/images.md "uv"): uv comes from the tool directory
// (LECTERN_BUILD_TOOLS_DIR/uv/<version>/uv) or the build system's own; without one, the build fails
// at once, saying where to put it.
//
// uv itself cannot be had on this machine kind: PyPI is not reachable, Debian has no uv package and
// no npm package ships it. So the second test puts a stand-in at uv's place in a tool directory: a
// shell script that prints what it was asked, with the environment it got, and makes the
// environment with Python's own venv module. It checks Lectern's half, in real builds in the
// sandbox: the commands as Read the Docs runs them, Read the Docs' UV_* variables and Lectern's,
// uv bound read-only and on PATH, and the docs built in the environment uv made. What uv itself
// does with them is not tested here.
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { bwrapAvailable } from '../../src/sandbox/sandbox.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, publishedHtml, sphinxFiles, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { tempDirs } from '../helpers/cli-databases.ts';
import { type GitServer, startGitServer } from '../helpers/git.ts';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const dirs = tempDirs();
let server: GitServer;

beforeAll(async () => {
  if (!bwrapAvailable()) throw new Error('bubblewrap (bwrap) is missing or cannot run here: apt-get install -y bubblewrap');
  server = await startGitServer();
});
afterAll(async () => {
  await server?.close();
  dirs.cleanup();
});

type BuildRow = Awaited<ReturnType<typeof waitForBuild>>;
const logOf = (b: BuildRow) => b.commands.map((c) => `$ ${c.command}\n${c.output}`).join('\n');

const UV_YAML = [
  'version: 2',
  'build:',
  '  os: ubuntu-22.04',
  '  tools: {python: "3"}',
  '  jobs:',
  '    post_install:',
  '      - echo "uv is $(command -v uv)"',
  '      - touch "$(dirname "$(command -v uv)")/written" || echo "uv\'s directory is read-only"',
  'python:',
  '  install:',
  '    - method: uv',
  '      command: sync',
  '      groups: [docs]',
  '      extras: all',
  'sphinx:',
  '  configuration: docs/conf.py',
  '',
].join('\n');

/** One app and worker with `env`, for one test. */
async function withLectern<T>(env: Record<string, string>, run: (t: TestApp, token: string) => Promise<T>): Promise<T> {
  const t = await testApp(env);
  let worker: Worker | undefined;
  try {
    const token = await t.user('uv-user');
    worker = await startTestWorker(t);
    return await run(t, token);
  } finally {
    await worker?.stop(1000);
    await t.close();
  }
}

describe('python.install with method: uv', () => {
  it('fails the build at once where no uv is available, saying where an operator puts one', async () => {
    const host = ['/usr/local/bin/uv', '/usr/bin/uv'].filter((p) => existsSync(p));
    expect(host, 'this test needs a machine without its own uv').toEqual([]);
    const tools = dirs.make('lectern-uv-none-');
    await withLectern({ LECTERN_BUILD_TOOLS_DIR: tools }, async (t, token) => {
      const repo = server.repo('uv-missing', sphinxFiles({ '.readthedocs.yaml': UV_YAML, 'pyproject.toml': '[project]\nname = "x"\nversion = "1"\n' }));
      const p = await importProject(t, token, 'No uv here', repo.url);
      const build = await waitForBuild(t, await latestBuildOf(t, p.slug));
      expect(build.success).toBe(false);
      expect(build.error).toBe(
        `python.install: the entry with method: uv needs uv, and no uv is available to builds on this machine: an operator puts the uv binary of a release of uv at ${tools}/uv/<version>/uv, or installs it on this machine (/usr/local/bin/uv or /usr/bin/uv).`,
      );
      // Nothing ran past the configuration.
      expect(build.commands.map((c) => c.command)).not.toContainEqual(expect.stringMatching(/venv|sync|pip/));
    });
  });

  it('runs uv from the tool directory as Read the Docs runs it (a stand-in: uv cannot be had here)', async () => {
    const tools = dirs.make('lectern-uv-tools-');
    const uvDir = path.join(tools, 'uv', '0.9.0');
    mkdirSync(uvDir, { recursive: true });
    writeFileSync(
      path.join(uvDir, 'uv'),
      [
        '#!/bin/bash',
        "# A stand-in for uv: says what it was asked and with which environment; makes the venv with Python's own module.",
        'echo "stand-in uv: $*"',
        'for v in UV_PROJECT UV_PROJECT_ENVIRONMENT UV_PYTHON UV_PYTHON_DOWNLOADS UV_LINK_MODE READTHEDOCS_VIRTUALENV_PATH; do printenv "$v" | sed "s/^/$v=/"; done',
        'case "$1" in',
        '  venv) exec "$3" -m venv --system-site-packages --without-pip "$4" ;;',
        '  sync) test -f "$UV_PROJECT/pyproject.toml" && echo "the project: $UV_PROJECT/pyproject.toml" ;;',
        'esac',
        '',
      ].join('\n'),
    );
    chmodSync(path.join(uvDir, 'uv'), 0o755);
    await withLectern({ LECTERN_BUILD_TOOLS_DIR: tools }, async (t, token) => {
      const repo = server.repo('uv-standin', sphinxFiles({ '.readthedocs.yaml': UV_YAML, 'pyproject.toml': '[project]\nname = "x"\nversion = "1"\n' }));
      const p = await importProject(t, token, 'Installed by uv', repo.url);
      const build = await waitForBuild(t, await latestBuildOf(t, p.slug));
      const log = logOf(build);
      expect(build.error, log).toBeNull();
      expect(build.commands.find((c) => c.command === 'build.os: ubuntu-22.04')?.output).toContain(
        `python.install: uv 0.9.0 (from the tool directory, ${uvDir}) makes and fills the environment.`,
      );
      const commands = build.commands.map((c) => c.command);
      expect(commands).toContain('uv venv --python /usr/bin/python3 $READTHEDOCS_VIRTUALENV_PATH');
      expect(commands).toContain('uv sync --group docs --all-extras');
      expect(commands).not.toContainEqual(expect.stringMatching(/pip install/));
      const sync = build.commands.find((c) => c.command.startsWith('uv sync'))!;
      const venv = /^READTHEDOCS_VIRTUALENV_PATH=(.*)$/m.exec(sync.output)?.[1];
      expect(venv, sync.output).toBeTruthy();
      expect(sync.output).toContain(`UV_PROJECT_ENVIRONMENT=${venv}\n`);
      expect(sync.output).toContain(`UV_PYTHON=${venv}/bin/python\n`);
      expect(sync.output).toMatch(/^UV_PROJECT=\/.*\/checkout$/m);
      expect(sync.output).toContain('UV_PYTHON_DOWNLOADS=never\n');
      expect(sync.output).toContain('UV_LINK_MODE=copy\n');
      expect(sync.output).toMatch(/^the project: \/.*\/checkout\/pyproject\.toml$/m);
      // On PATH for the project's own jobs, at its own path, and nothing of it writable.
      expect(log).toContain(`uv is ${uvDir}/uv`);
      expect(log).toContain("uv's directory is read-only");
      expect(existsSync(path.join(uvDir, 'written'))).toBe(false);
      expect(await publishedHtml(t, p.slug, 'latest', 'index.html')).toContain('Welcome.');
    });
  });
});
