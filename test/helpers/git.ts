// Real git repositories for tests, served over a real protocol: `git daemon` on 127.0.0.1.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './net.ts';

const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Lectern Test',
  GIT_AUTHOR_EMAIL: 'test@lectern.invalid',
  GIT_COMMITTER_NAME: 'Lectern Test',
  GIT_COMMITTER_EMAIL: 'test@lectern.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
};

export function git(cwd: string, ...args: string[]): string {
  try {
    return execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (e) {
    const err = e as { code?: string; stderr?: string };
    if (err.code === 'ENOENT') throw new Error('git is not installed: these tests need it (apt-get install -y git)');
    throw new Error(`git ${args.join(' ')} failed: ${err.stderr ?? e}`);
  }
}


export interface GitServer {
  /** Base URL: `git://127.0.0.1:<port>`. */
  url: string;
  root: string;
  /** A work tree whose pushes land in the served bare repository `name`; returns its clone URL. */
  repo(name: string, files?: Record<string, string>): { work: string; url: string; commit: (files: Record<string, string>, message?: string) => string };
  close(): Promise<void>;
}

export async function startGitServer(): Promise<GitServer> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'lectern-git-'));
  const served = path.join(root, 'served');
  mkdirSync(served);
  const port = await freePort();
  let daemon: ChildProcess;
  try {
    daemon = spawn('git', ['daemon', '--export-all', '--reuseaddr', `--base-path=${served}`, '--listen=127.0.0.1', `--port=${port}`, '--enable=receive-pack', served], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env,
    });
  } catch {
    throw new Error('git daemon could not start: these tests need git (apt-get install -y git)');
  }
  // Wait until it accepts connections.
  const started = Date.now();
  for (;;) {
    try {
      git(root, 'ls-remote', `git://127.0.0.1:${port}/none`);
    } catch (e) {
      if (!String(e).includes('Connection refused') && !String(e).includes('unable to connect')) break;
      if (Date.now() - started > 10_000) throw new Error('git daemon did not start within 10 s');
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    break;
  }
  const url = `git://127.0.0.1:${port}`;
  return {
    url,
    root,
    repo(name, files = { 'README.md': '# test\n' }) {
      const bare = path.join(served, `${name}.git`);
      git(root, 'init', '--quiet', '--bare', '--initial-branch=main', bare);
      const work = path.join(root, 'work', name);
      mkdirSync(work, { recursive: true });
      git(work, 'init', '--quiet', '--initial-branch=main');
      git(work, 'remote', 'add', 'origin', bare);
      const commit = (more: Record<string, string>, message = 'change') => {
        for (const [file, text] of Object.entries(more)) {
          mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
          writeFileSync(path.join(work, file), text);
        }
        git(work, 'add', '-A');
        git(work, 'commit', '--quiet', '--allow-empty', '-m', message);
        return git(work, 'rev-parse', 'HEAD');
      };
      commit(files, 'initial');
      git(work, 'push', '--quiet', 'origin', 'main');
      return { work, url: `${url}/${name}.git`, commit };
    },
    close: async () => {
      daemon.kill('SIGTERM');
      await new Promise((r) => (daemon.exitCode !== null ? r(null) : daemon.once('exit', r)));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
