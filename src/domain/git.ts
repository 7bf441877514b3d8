// What Lectern asks a git remote without cloning it: its branches, tags and default branch.

import { lookup } from 'node:dns/promises';
import { existsSync, lstatSync, readFileSync, realpathSync, type Stats } from 'node:fs';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../config.ts';
import { bwrapAvailable, firewallRefusal, GIT_ENV, runSandboxedOnce } from '../sandbox/sandbox.ts';
import { fileStorageDir } from '../storage/spec.ts';

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
  // A repository on this machine: checked again now (a link may have changed since the import),
  // read from its directory mounted read-only, with no network.
  const local = localRepositoryPath(url) === null ? null : resolveLocalRepository(url, config.build.localRepositories);
  if (typeof local === 'string') throw new GitError(`git ls-remote ${url} refused: ${local}`);
  const how = local ? localGit(local) : null;
  const r = await runSandboxedOnce(['git', 'ls-remote', ...(how?.options ?? []), '--symref', '--', how?.url ?? url, 'HEAD', 'refs/heads/*', 'refs/tags/*'], {
    scratch: path.join(config.dataDir, 'builds'),
    hide,
    limits: config.build,
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', ...GIT_ENV, ...how?.env },
    timeoutMs,
    readOnly: local ? [local.dir] : undefined,
  });
  if (r.exitCode !== 0) {
    const why = r.timedOut ? `timed out after ${timeoutMs / 1000}s` : r.output.trim().split('\n').slice(-2).join(' ');
    const firewall = local ? null : await firewallExplanation(url, config.build.networkAllow);
    throw new GitError(`git ls-remote ${url} failed: ${why}${firewall ? ` ${firewall}` : ''}`);
  }
  return parseLsRemote(r.output);
}

// ---------------------------------------------------------------------------------------------
// Repositories on this machine (LECTERN_BUILD_LOCAL_REPOSITORIES): a `file://` URL or an absolute
// path under one of the directories the operator names. Checked when a project is imported or
// updated, and again at each clone and version sync (a link may have changed meanwhile); the
// clone's sandbox then gets the directory read-only, and nothing else of the host.
// @see docs/design/sandbox.md "Repositories on this machine"

export const LOCAL_SETTING = 'LECTERN_BUILD_LOCAL_REPOSITORIES';

/** A repository on this machine that builds may clone. */
export interface LocalRepository {
  /** The repository as git is given it: its real path (links resolved). */
  path: string;
  /** Its git directory (`path` itself when bare). */
  gitDir: string;
  /** The allowed directory that holds it: what the clone's sandbox gets, read-only. */
  dir: string;
}

/** The path a repository URL names on this machine (a `file://` URL or an absolute path), or null for any other URL. */
export function localRepositoryPath(url: string): string | null {
  // `//host/path` is a scheme-relative URL, not a path.
  if (url.startsWith('/') && !url.startsWith('//')) return url;
  if (/^file:/i.test(url)) {
    // file:///srv/git/docs.git only: file://host/... names another machine's file.
    const m = /^file:\/\/(\/.*)$/i.exec(url);
    if (!m) return '';
    try {
      return decodeURIComponent(m[1]!);
    } catch {
      return '';
    }
  }
  return null;
}

const under = (p: string, dir: string) => p === dir || p.startsWith(dir === '/' ? '/' : `${dir}/`);
const realOrNull = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
};

/**
 * The local repository `url` names, checked against the allowed directories (real paths), or why
 * it is refused. Nothing on the host is looked at for a path outside them (no oracle for what
 * exists elsewhere). Refused: `..`, a link leading out, a `.git` link or file pointing out, and
 * object alternates or a common directory outside (git would read them).
 */
export function resolveLocalRepository(url: string, allowed: string[]): LocalRepository | string {
  const given = localRepositoryPath(url);
  if (given === null) return `${url} is not a repository on this machine`;
  if (given === '') return `A file:// URL must name an absolute path on this machine (file:///srv/git/docs.git): ${url}`;
  if (!allowed.length)
    return `Repositories on this machine cannot be built here: ${LOCAL_SETTING} names the directories whose repositories builds may clone, and it is not set.`;
  if (/[\0\n\r]/.test(given)) return 'Invalid character in the path';
  const outside = `${given} is outside the directories whose repositories builds may clone (${LOCAL_SETTING}: ${allowed.join(', ')})`;
  if (given.split('/').includes('..')) return `${given}: a repository path may not contain '..' (${LOCAL_SETTING}: ${allowed.join(', ')})`;
  const lexical = path.resolve(given);
  if (!allowed.some((d) => under(lexical, d))) return outside;
  const real = realOrNull(lexical);
  if (!real) return `${given} does not exist`;
  const dir = allowed.find((d) => under(real, d));
  if (!dir) return `${given} is a link that leads outside the directories whose repositories builds may clone (${LOCAL_SETTING}: ${allowed.join(', ')})`;
  const leadsOut = (what: string) =>
    `${given}: its ${what} points outside ${dir}, which a clone cannot read (${LOCAL_SETTING} names the directories builds may read)`;
  let gitDir = real;
  const dotGit = path.join(real, '.git');
  let st: Stats | null = null;
  try {
    st = lstatSync(dotGit);
  } catch {}
  if (st) {
    let target: string | null;
    if (st.isFile()) {
      const m = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'));
      target = m ? realOrNull(path.resolve(real, m[1]!.trim())) : null;
    } else target = realOrNull(dotGit);
    if (!target || !under(target, dir)) return leadsOut('.git');
    gitDir = target;
  } else if (!existsSync(path.join(real, 'HEAD')) || !existsSync(path.join(real, 'objects'))) {
    return `${given} is not a git repository (no .git, and not a bare repository)`;
  }
  // A worktree's common directory, and the object directories git borrows from (alternates, also
  // those of the common directory, and theirs in turn).
  const commondir = path.join(gitDir, 'commondir');
  let common = gitDir;
  if (existsSync(commondir)) {
    const c = realOrNull(path.resolve(gitDir, readFileSync(commondir, 'utf8').trim()));
    if (!c || !under(c, dir)) return leadsOut('common git directory');
    common = c;
  }
  const seen = new Set<string>();
  const objects = [path.join(gitDir, 'objects'), path.join(common, 'objects')];
  while (objects.length) {
    const o = objects.pop()!;
    const real = realOrNull(o) ?? path.resolve(o);
    if (seen.has(real)) continue;
    seen.add(real);
    if (!under(real, dir)) return leadsOut('objects/info/alternates');
    let text = '';
    try {
      text = readFileSync(path.join(real, 'info', 'alternates'), 'utf8');
    } catch {}
    for (const line of text.split('\n')) {
      const l = line.trim();
      if (l && !l.startsWith('#')) objects.push(path.resolve(real, l.replace(/^"|"$/g, '')));
    }
  }
  return { path: real, gitDir, dir };
}

/**
 * How git is run against a local repository: the file transport allowed for this command only;
 * the URL git is given; and the upload-pack it runs on the source, told to trust that repository's
 * own paths only. Builds run as another user than the repository's owner, and git refuses a
 * repository it does not own unless safe.directory names it; git clears `-c` settings
 * (GIT_CONFIG_PARAMETERS) for a local upload-pack, so they go on its own command line
 * (`--upload-pack`), where git reads them as the command line's, never the repository's.
 */
export function localGit(repo: LocalRepository): { options: string[]; env: Record<string, string>; url: string } {
  const quote = (v: string) => `'${v.replaceAll("'", `'\\''`)}'`;
  const safe = [...new Set([repo.path, repo.gitDir])].map((p) => `-c ${quote(`safe.directory=${p}`)}`).join(' ');
  return {
    options: [`--upload-pack=git ${safe} upload-pack`],
    env: { GIT_ALLOW_PROTOCOL: 'file' },
    url: `file://${repo.path}`,
  };
}

/**
 * Why the build firewall refused the host of a network repository URL (resolved here, as the
 * sandbox would), or null when it would not: what a failed clone or ls-remote adds to git's
 * "Connection refused" or "No route to host".
 */
export async function firewallExplanation(url: string, allow: string[]): Promise<string | null> {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return null;
  }
  if (!host) return null;
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch {
    return null;
  }
  for (const a of addresses) {
    const why = firewallRefusal(a, allow);
    if (why) return `The build network refused ${host === a ? a : `${host} (${a})`}: ${why}.`;
  }
  return null;
}
