// Real git repositories for tests, served over a real protocol: `git daemon` on a test host of its
// own, a network namespace (`lectern-test`) joined to this machine by a veth pair. Builds may never
// reach this machine's addresses or loopback, so the repositories live at TEST_HOST, in the private
// range TEST_NETWORK that the tests allow (LECTERN_BUILD_NETWORK_ALLOW), as an operator would allow
// an internal git server.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The test host's network, allowed to builds in tests; the host side of the link is 10.213.0.1. */
export const TEST_NETWORK = '10.213.0.0/24';
export const TEST_HOST = '10.213.0.2';
export const TEST_NETNS = 'lectern-test';

/** Makes the test host's namespace once per machine (idempotent, safe across test processes). */
export function ensureTestHost(): void {
  const ready = () => {
    try {
      return execFileSync('ip', ['-n', TEST_NETNS, '-4', 'addr', 'show', 'dev', 'veth-lt1'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).includes(TEST_HOST);
    } catch {
      return false;
    }
  };
  if (ready()) return;
  if (process.getuid?.() !== 0) throw new Error('the build tests serve git from a network namespace, which needs root (ip netns add)');
  const lock = path.join(os.tmpdir(), 'lectern-test-netns.lock');
  const until = Date.now() + 20_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (ready()) return;
      if (Date.now() > until) rmSync(lock, { recursive: true, force: true });
      execFileSync('sleep', ['0.1']);
    }
  }
  try {
    if (ready()) return;
    const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      ip('netns', 'del', TEST_NETNS);
    } catch {}
    try {
      ip('link', 'del', 'veth-lt0');
    } catch {}
    ip('netns', 'add', TEST_NETNS);
    ip('link', 'add', 'veth-lt0', 'type', 'veth', 'peer', 'name', 'veth-lt1');
    ip('link', 'set', 'veth-lt1', 'netns', TEST_NETNS);
    ip('addr', 'add', '10.213.0.1/24', 'dev', 'veth-lt0');
    ip('link', 'set', 'veth-lt0', 'up');
    ip('-n', TEST_NETNS, 'addr', 'add', `${TEST_HOST}/24`, 'dev', 'veth-lt1');
    ip('-n', TEST_NETNS, 'link', 'set', 'veth-lt1', 'up');
    ip('-n', TEST_NETNS, 'link', 'set', 'lo', 'up');
  } catch (e) {
    throw new Error(`could not make the test host's network namespace (needs iproute2 and root): ${(e as { stderr?: Buffer }).stderr?.toString() ?? e}`);
  } finally {
    try {
      rmdirSync(lock);
    } catch {}
  }
}

/** Runs a server program on the test host. */
export function spawnOnTestHost(cmd: string, args: string[], opts: Parameters<typeof spawn>[2] = {}): ChildProcess {
  ensureTestHost();
  return spawn('ip', ['netns', 'exec', TEST_NETNS, cmd, ...args], opts);
}

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
  /** Base URL: `git://10.213.0.2:<port>`. */
  url: string;
  root: string;
  /** A work tree whose pushes land in the served bare repository `name`; returns its clone URL. */
  repo(name: string, files?: Record<string, string>): { work: string; url: string; commit: (files: Record<string, string>, message?: string) => string };
  close(): Promise<void>;
}

let servers = 0;

export async function startGitServer(): Promise<GitServer> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'lectern-git-'));
  const served = path.join(root, 'served');
  mkdirSync(served);
  if (!existsSync('/usr/bin/git')) throw new Error('git is not installed: these tests need it (apt-get install -y git)');
  let daemon!: ChildProcess;
  let port = 0;
  // A port free on the test host: git daemon says when it can't bind, and another is tried.
  for (let attempt = 0; attempt < 20 && !port; attempt++) {
    // Spread by process: test files in other processes serve from the same test host.
    const candidate = 20_000 + ((process.pid * 613 + servers++ * 7919 + attempt * 104_729 + Math.floor(Math.random() * 50)) % 40_000);
    daemon = spawnOnTestHost(
      'git',
      ['daemon', '--export-all', '--reuseaddr', `--base-path=${served}`, `--listen=${TEST_HOST}`, `--port=${candidate}`, '--enable=receive-pack', served],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env,
      },
    );
    let failed = false;
    daemon.once('exit', () => (failed = true));
    const started = Date.now();
    for (;;) {
      if (failed) break;
      try {
        git(root, 'ls-remote', `git://${TEST_HOST}:${candidate}/none`);
      } catch (e) {
        if (!String(e).includes('Connection refused') && !String(e).includes('unable to connect')) {
          port = candidate;
          break;
        }
        if (Date.now() - started > 10_000) throw new Error('git daemon did not start within 10 s');
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      port = candidate;
      break;
    }
    // What answered may be another process's daemon on that port, ours having failed to bind. A fixed
    // wait on purpose: it gives ours time to exit, which must NOT happen, so only a time bound fits.
    if (port) {
      await new Promise((r) => setTimeout(r, 150));
      if (failed) port = 0;
    }
  }
  if (!port) throw new Error('git daemon could not start on the test host');
  const url = `git://${TEST_HOST}:${port}`;
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
