// What Lectern asks a git remote without cloning it: its branches, tags and default branch.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

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
      if (name.endsWith('^{}')) tags.set(name.slice(0, -3), commit); // the peeled commit wins
      else if (!tags.has(name)) tags.set(name, commit);
    }
  }
  const list = (m: Map<string, string>) => [...m].map(([name, commit]) => ({ name, commit }));
  return { branches: list(branches), tags: list(tags), head };
}

export async function lsRemote(url: string, timeoutMs = 60_000): Promise<RemoteRefs> {
  try {
    const { stdout } = await run('git', ['ls-remote', '--symref', url, 'HEAD', 'refs/heads/*', 'refs/tags/*'], {
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'true', HOME: '/nonexistent' },
    });
    return parseLsRemote(stdout);
  } catch (e) {
    const err = e as { stderr?: string; code?: unknown; killed?: boolean };
    const why = err.killed ? `timed out after ${timeoutMs / 1000}s` : (err.stderr ?? String(e)).trim().split('\n').slice(-2).join(' ');
    throw new GitError(`git ls-remote ${url} failed: ${why}`);
  }
}
