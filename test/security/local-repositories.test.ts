// What a clone of a repository on this machine can reach (LECTERN_BUILD_LOCAL_REPOSITORIES): its
// sandbox gets the allowed directory read-only and nothing else of the host, so what a hostile
// repository points at outside it (object alternates, a .git link) is simply absent, even when the
// import-time check is passed by (the repository changed after it); the source's hooks and
// upload-pack hook never run; a submodule naming another local path is refused.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BUILD_LIMITS, loadConfig } from '../../src/config.ts';
import { localGit, resolveLocalRepository } from '../../src/domain/git.ts';
import { GIT_ENV, runSandboxedOnce } from '../../src/sandbox/sandbox.ts';
import { git } from '../helpers/git.ts';

let root: string;
let allowed: string;
let outside: string;
let scratch: string;

function makeRepo(dir: string, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '--quiet', '--initial-branch=main');
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(dir, file), text);
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '-m', 'initial');
}

/** Runs `script` in a clone's sandbox for the repository at `repo` (as pipeline's clone does: the allowed directory read-only, no network, as a build user when root). */
async function inCloneSandbox(repo: string, script: string) {
  const local = resolveLocalRepository(repo, [allowed]);
  if (typeof local === 'string') throw new Error(local);
  const how = localGit(local);
  const r = await runSandboxedOnce(['sh', '-c', script, 'sh', how.url, ...how.options], {
    scratch,
    hide: [scratch],
    limits: DEFAULT_BUILD_LIMITS,
    env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', ...GIT_ENV, ...how.env },
    timeoutMs: 60_000,
    readOnly: [local.dir],
  });
  return r;
}

beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'lectern-local-sandbox-'));
  allowed = path.join(root, 'git');
  outside = path.join(root, 'elsewhere');
  scratch = path.join(root, 'scratch');
  mkdirSync(allowed);
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'secret.txt'), 'outside secret\n');
  makeRepo(path.join(outside, 'lender'), { 'lent.md': 'lent\n' });
  makeRepo(path.join(allowed, 'plain'), { 'index.md': '# plain\n' });
});
afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("a local repository's clone sandbox", () => {
  it('has the allowed directory read-only, and nothing outside it', async () => {
    const r = await inCloneSandbox(
      path.join(allowed, 'plain'),
      `ls ${allowed}; cat ${outside}/secret.txt || echo OUTSIDE-ABSENT; ls ${root}; touch ${allowed}/written 2>&1 || echo READ-ONLY`,
    );
    expect(r.output).toContain('plain');
    expect(r.output).toContain('OUTSIDE-ABSENT');
    expect(r.output).not.toContain('outside secret');
    expect(r.output).not.toMatch(/^elsewhere$/m); // the listing of their common parent
    expect(r.output).toContain('READ-ONLY');
  });

  it('clones with git as a build user, and the source never runs its hooks or its upload-pack hook', async () => {
    const repo = path.join(allowed, 'hooked');
    makeRepo(repo, { 'index.md': '# hooked\n' });
    mkdirSync(path.join(repo, 'myhooks'));
    writeFileSync(path.join(repo, 'myhooks', 'post-checkout'), '#!/bin/sh\necho ran > "$HOME/hook-ran"\n', { mode: 0o755 });
    git(repo, 'config', 'core.hooksPath', path.join(repo, 'myhooks'));
    git(repo, 'config', 'uploadpack.packObjectsHook', 'sh -c "echo ran > \\"$HOME/pack-hook-ran\\"; exec \\"$@\\"" sh');
    const r = await inCloneSandbox(
      repo,
      'url=$1; shift; git clone "$@" --depth 1 --quiet -- "$url" out && cat out/index.md; ls "$HOME/hook-ran" "$HOME/pack-hook-ran" 2>&1 || true',
    );
    expect(r.exitCode, r.output).toBe(0);
    expect(r.output).toContain('# hooked');
    expect(r.output).toMatch(/hook-ran': No such file/);
    expect(r.output).toMatch(/pack-hook-ran': No such file/);
  });

  it('a repository borrowing its objects from outside (alternates) cannot read them in the sandbox, even unchecked', async () => {
    const repo = path.join(allowed, 'borrower');
    git(root, 'clone', '--quiet', '--shared', path.join(outside, 'lender'), repo);
    // The check refuses it at import and at clone time...
    expect(resolveLocalRepository(repo, [allowed])).toMatch(/objects\/info\/alternates points outside/);
    // ...and were it passed by (the alternates written after the check), the sandbox holds only the
    // allowed directory: the objects outside are absent, and the clone fails without them.
    const how = localGit({ path: repo, gitDir: path.join(repo, '.git'), dir: allowed });
    const clone = (readOnly: string[]) =>
      runSandboxedOnce(['sh', '-c', 'git clone "$@" out && cat out/lent.md', 'sh', ...how.options, '--', how.url], {
        scratch,
        hide: [scratch],
        limits: DEFAULT_BUILD_LIMITS,
        env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', ...GIT_ENV, ...how.env },
        timeoutMs: 60_000,
        readOnly,
      });
    const r = await clone([allowed]);
    expect(r.exitCode).not.toBe(0);
    expect(r.output).toMatch(new RegExp(`${outside}/lender/.git/objects`));
    expect(r.output).not.toContain('lent\n');
    // The same clone with the lender's directory in the sandbox too reads them: the mount is what keeps them out.
    const seen = await clone([allowed, path.join(outside, 'lender')]);
    expect(seen.exitCode, seen.output).toBe(0);
    expect(seen.output).toContain('lent');
  });

  it('a submodule naming another local path is not cloned (git gets only network transports there)', async () => {
    const sub = path.join(allowed, 'with-sub');
    makeRepo(sub, { 'index.md': '# with sub\n' });
    const r = await inCloneSandbox(
      sub,
      `url=$1; shift; git clone "$@" --quiet -- "$url" out && cd out && GIT_ALLOW_PROTOCOL=${GIT_ENV.GIT_ALLOW_PROTOCOL} git -c protocol.file.allow=always clone --quiet file://${outside}/lender lender 2>&1; echo "exit $?"`,
    );
    expect(r.output).toMatch(/transport 'file' not allowed/);
    expect(r.output).not.toMatch(/exit 0/);
  });
});

describe('LECTERN_BUILD_LOCAL_REPOSITORIES at start-up', () => {
  const load = (value: string, more: Record<string, string> = {}) => {
    try {
      return loadConfig({ LECTERN_DATA_DIR: path.join(root, 'data'), LECTERN_BUILD_LOCAL_REPOSITORIES: value, ...more }).build.localRepositories;
    } catch (e) {
      return (e as Error).message;
    }
  };

  it('takes existing absolute directories, as their real paths', () => {
    symlinkSync(allowed, path.join(root, 'allowed-link'));
    expect(load(`${allowed}, ${path.join(root, 'allowed-link')}`)).toEqual([allowed]);
  });

  it('refuses a relative path, a missing one, a file, /, the data dir, a directory holding it, and the storage', () => {
    mkdirSync(path.join(root, 'data'), { recursive: true });
    writeFileSync(path.join(root, 'a-file'), '');
    const cases: [string, RegExp, Record<string, string>?][] = [
      ['srv/git', /is not an absolute path/],
      [path.join(root, 'missing'), /does not exist/],
      [path.join(root, 'a-file'), /is not a directory/],
      ['/', /the whole file system/],
      [path.join(root, 'data'), /overlaps Lectern's own data/],
      [root, /overlaps Lectern's own data/],
      [outside, /overlaps Lectern's own data/, { LECTERN_STORAGE: `file:${outside}/storage` }],
    ];
    for (const [value, why, more] of cases) {
      const r = load(value, more);
      expect(r, value).toMatch(/LECTERN_BUILD_LOCAL_REPOSITORIES/);
      expect(r, value).toMatch(why);
    }
  });
});
