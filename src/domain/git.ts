// What Lectern asks a git remote without cloning it: its branches, tags and default branch.
import os from 'node:os';
import path from 'node:path';
import { bwrapAvailable, GIT_ENV, runSandboxedOnce } from '../builds/sandbox.ts';
import type { Config } from '../config.ts';
import { fileStorageDir } from '../storage/index.ts';

export interface RemoteRefs {
  branches: { name: string; commit: string }[];
  /** Tag names with the commit they point to (annotated tags peeled). */
  tags: { name: string; commit: string }[];
  /** The remote's default branch, when it says. */
  head: string | null;
}

export class GitError extends Error {
  override name = 'GitError';
}

export function parseLsRemote(output: string): RemoteRefs {
  const branches = new Map<string, string>();
  const tags = new Map<string, string>();
  let head: string | null = null;
  for (const line of output.split('\n')) {
    const symref = /^ref: refs\/heads\/(.+)\tHEAD$/.exec(line);
    if (symref) {
      head = symref[1]!;
      continue;
    }
    const [commit, ref] = line.split('\t');
    if (!commit || !ref) continue;
    if (ref.startsWith('refs/heads/')) branches.set(ref.slice(11), commit);
    else if (ref.startsWith('refs/tags/')) {
      const name = ref.slice(10);
      if (name.endsWith('^{}'))
        tags.set(name.slice(0, -3), commit); // the peeled commit wins
      else if (!tags.has(name)) tags.set(name, commit);
    }
  }
  const list = (m: Map<string, string>) => [...m].map(([name, commit]) => ({ name, commit }));
  return { branches: list(branches), tags: list(tags), head };
}

/**
 * The remote's refs, asked by `git ls-remote` in the build sandbox with its filtered network: the
 * URL is the project's, so it must reach no more than a build's clone may (never this machine,
 * loopback, link-local or private ranges not allowed).
 */
export async function lsRemote(config: Pick<Config, 'dataDir' | 'storage' | 'build'>, url: string, timeoutMs = 60_000): Promise<RemoteRefs> {
  const home = os.homedir();
  const hide = [
    config.dataDir,
    ...[fileStorageDir(config.storage)].filter((d): d is string => d !== null),
    ...(home !== '/' && path.isAbsolute(home) ? [home] : []),
  ];
  if (!bwrapAvailable()) throw new GitError(`git ls-remote ${url} failed: bubblewrap (bwrap) is not installed, and Lectern asks no remote outside its sandbox`);
  const r = await runSandboxedOnce(['git', 'ls-remote', '--symref', '--', url, 'HEAD', 'refs/heads/*', 'refs/tags/*'], {
    scratch: path.join(config.dataDir, 'builds'),
    hide,
    limits: config.build,
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', ...GIT_ENV },
    timeoutMs,
  });
  if (r.exitCode !== 0) {
    const why = r.timedOut ? `timed out after ${timeoutMs / 1000}s` : r.output.trim().split('\n').slice(-2).join(' ');
    throw new GitError(`git ls-remote ${url} failed: ${why}`);
  }
  return parseLsRemote(r.output);
}
