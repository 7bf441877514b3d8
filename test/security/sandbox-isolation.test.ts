// The sandbox shows a build only what it needs (issue 21). Real builds of real repositories, run
// by a worker as the two-command install runs it (root, bubblewrap, build users), try to reach
// what is not theirs: PostgreSQL over its unix socket with Debian's trust authentication, unix
// sockets placed all over the host and in the abstract namespace, descriptors Lectern's process
// inherited, programs left in the build's PATH for Lectern to run, and configuration paths linked
// to host files (a file-existence oracle).
// @see docs/design/sandbox.md, README "Security model"
import { spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BuildConfigError, loadBuildConfig } from '../../src/builds/config.ts';
import type { Worker } from '../../src/builds/worker.ts';
import { bwrapAvailable, ETC_ALLOWED, filteredNetworkAvailable, pipPaths } from '../../src/sandbox/sandbox.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { DEBIAN_SOCKET_DIR, type DebianCluster, startDebianCluster } from '../helpers/debian-postgres.ts';
import { type GitServer, git, startGitServer } from '../helpers/git.ts';

// Real builds, several per hook, on a machine other tests share.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 300_000 });

let t: TestApp;
let server: GitServer;
let token: string;
let worker: Worker;
const tag = `lectern-isolation-${process.pid}`;
const scratch: string[] = [];

beforeAll(async () => {
  if (!bwrapAvailable()) throw new Error('bubblewrap (bwrap) is missing or cannot run here: apt-get install -y bubblewrap');
  if (!filteredNetworkAvailable()) throw new Error('slirp4netns and nftables are needed for the build network: apt-get install -y slirp4netns nftables');
  if (process.getuid?.() !== 0) throw new Error('these tests run Lectern as root, as the two-command install does');
  t = await testApp();
  server = await startGitServer();
  token = await t.user('mallory');
  worker = await startTestWorker(t);
});

afterAll(async () => {
  await worker?.stop(1000);
  await server?.close();
  await t?.close();
  for (const p of scratch) rmSync(p, { recursive: true, force: true });
});

type BuildRow = Awaited<ReturnType<typeof waitForBuild>>;
const logOf = (b: BuildRow) => b.commands.map((c) => `$ ${c.command}\n${c.output}`).join('\n');
const yaml = (lines: string[]) => ['version: 2', 'build:', '  os: ubuntu-22.04', '  tools: {python: "3.11"}', ...lines, ''].join('\n');

/** Imports `files` as a new project and waits for its first build. */
async function buildOf(name: string, files: Record<string, string>) {
  const repo = server.repo(name, files);
  const project = await importProject(t, token, name, repo.url);
  const build = await waitForBuild(t, await latestBuildOf(t, project.slug), 180_000);
  return { repo, project, build };
}

async function rebuild(slug: string) {
  const res = await t.http.post(`/api/v3/projects/${slug}/versions/latest/builds/`).set('authorization', `Token ${token}`);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return waitForBuild(t, res.body.build.id, 180_000);
}

/** Lines of `log` between `BEGIN name` and `END name`. */
function section(log: string, name: string): string[] {
  const m = new RegExp(`^BEGIN ${name}\\n([\\s\\S]*?)^END ${name}$`, 'm').exec(log);
  expect(m, `no ${name} section in the log:\n${log}`).not.toBeNull();
  return m![1]!.split('\n').filter(Boolean);
}

describe('no host socket is reachable from a build', () => {
  const pgSocketDir = DEBIAN_SOCKET_DIR;
  let pg: DebianCluster | undefined;
  let pgPort: number;
  /** Unix sockets this test listens on, by where they are; the abstract one's name starts with NUL. */
  const sockets: { label: string; address: string; server: Server; connections: number }[] = [];
  let build: BuildRow;

  const hostPsql = (sql: string) => pg!.psql(sql);

  beforeAll(async () => {
    // A cluster as Debian's initdb sets one up ("local all all trust"), its socket in /var/run/postgresql.
    pg = await startDebianCluster();
    pgPort = pg.port;
    // From the host, the socket answers anyone, with no password.
    expect(hostPsql('SELECT 40 + 2')).toBe('42');

    const places: [string, string][] = [
      ['run', '/run'],
      ['var-run', '/var/run'],
      ['host-tmp', os.tmpdir()],
      ['var-tmp', '/var/tmp'],
      ['var-lib', '/var/lib'],
      ['home', '/home'],
      ['root', '/root'],
      ['srv', '/srv'],
      ['mnt', '/mnt'],
      ['media', '/media'],
      ['opt', '/opt'],
      ['dev-shm', '/dev/shm'],
      ['data-dir', t.dataDir],
    ];
    for (const [label, dir] of places) {
      mkdirSync(dir, { recursive: true });
      sockets.push({ label, address: path.join(dir, `${tag}-${label}.sock`), server: createServer(), connections: 0 });
    }
    sockets.push({ label: 'abstract', address: `\0${tag}-abstract`, server: createServer(), connections: 0 });
    for (const s of sockets) {
      s.server.on('connection', (c) => {
        s.connections++;
        c.end('HOST-SOCKET-ANSWERED');
      });
      await new Promise<void>((resolve, reject) => {
        s.server.once('error', reject);
        s.server.listen(s.address, resolve);
      });
      if (!s.address.startsWith('\0')) chmodSync(s.address, 0o777); // any user may connect, build users included
    }
    // Each answers from the host.
    for (const s of sockets) {
      const answer = await new Promise<string>((resolve, reject) => {
        let text = '';
        const c = connect(s.address);
        c.on('data', (b) => (text += b.toString()));
        c.on('end', () => resolve(text));
        c.on('error', reject);
      });
      expect(answer, s.label).toBe('HOST-SOCKET-ANSWERED');
      s.connections = 0;
    }
    const targets = [...sockets.map((s) => [s.label, s.address]), ['postgresql', path.join(pgSocketDir, `.s.PGSQL.${pgPort}`)]];
    const probe = `import json, os, socket, subprocess, sys
step = sys.argv[1]
for label, address in json.loads(${JSON.stringify(JSON.stringify(targets))}):
    try:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(5)
        s.connect(address)
        print(step, label, 'REACHED', s.recv(40))
    except Exception as e:
        print(step, label, 'DENIED', type(e).__name__)
# psql as Debian's default cluster is reached: its socket directory named, and by default (PGPORT only).
for how, args in [('psql-h', ['-h', '/var/run/postgresql']), ('psql-default', [])]:
    try:
        r = subprocess.run(['psql', *args, '-p', '${pgPort}', '-U', 'postgres', '-d', 'postgres', '-Atc',
                            "CREATE TABLE lectern_pwned (); COPY (SELECT 1) TO PROGRAM 'id'; SELECT 'QUERY' || 'RAN'"],
                           capture_output=True, text=True, timeout=30)
        print(step, how, 'exit', r.returncode, repr(r.stdout.strip()), repr(r.stderr.strip()[:160]))
    except Exception as e:
        print(step, how, 'exit', 'none', type(e).__name__)
`;
    ({ build } = await buildOf('socket-probe', {
      'probe.py': probe,
      '.readthedocs.yaml': yaml([
        '  jobs:',
        '    post_checkout:',
        '      - python3 probe.py post_checkout',
        '    pre_install:',
        '      - python3 probe.py pre_install',
        '    pre_build:',
        '      - python3 probe.py pre_build',
        '    build:',
        '      html:',
        '        - mkdir -p $READTHEDOCS_OUTPUT/html',
        '        - echo probed > $READTHEDOCS_OUTPUT/html/index.html',
      ]),
    }));
  });

  afterAll(async () => {
    for (const s of sockets) {
      await new Promise((r) => s.server.close(r));
      if (!s.address.startsWith('\0')) rmSync(s.address, { force: true });
    }
    pg?.stop();
  });

  it('finds no socket of the host in any step, with a network of its own or none: not in /run, /var/run, /tmp, /var/lib, /home, /root, /srv, the data dir, nor an abstract one', () => {
    const log = logOf(build);
    expect(build.success, log).toBe(true);
    for (const step of ['post_checkout', 'pre_install', 'pre_build']) {
      for (const label of [...sockets.map((s) => s.label), 'postgresql']) {
        expect(log, `${step} ${label}`).toMatch(new RegExp(`^${step} ${label} DENIED \\w+$`, 'm'));
      }
    }
    expect(log).not.toContain('REACHED');
    expect(log).not.toContain('HOST-SOCKET-ANSWERED');
    // Nothing connected, as the servers themselves saw it.
    expect(sockets.filter((s) => s.connections > 0).map((s) => s.label)).toEqual([]);
  });

  it('cannot run a query on PostgreSQL over its socket with trust authentication', () => {
    const log = logOf(build);
    for (const step of ['post_checkout', 'pre_install', 'pre_build']) {
      for (const how of ['psql-h', 'psql-default']) {
        const line = new RegExp(`^${step} ${how} exit (\\S+)`, 'm').exec(log);
        expect(line, `${step} ${how}\n${log}`).not.toBeNull();
        expect(line![1], `${step} ${how}`).not.toBe('0');
      }
    }
    expect(log).not.toContain('QUERYRAN');
    // The server has no trace of it: no table was made.
    expect(hostPsql("SELECT coalesce(to_regclass('lectern_pwned')::text, 'none')")).toBe('none');
  });
});

describe("the sandbox's root", () => {
  let build: BuildRow;
  beforeAll(async () => {
    const list = (name: string, command: string) => [`      - "echo BEGIN ${name}; ${command}; echo END ${name}"`];
    ({ build } = await buildOf('root-listing', {
      '.readthedocs.yaml': yaml([
        '  jobs:',
        '    pre_install:',
        ...list('network-fds', 'ls /proc/self/fd -l | tail -n +2'),
        '    pre_build:',
        ...list('root', 'ls -A /'),
        ...list('etc', 'ls -A /etc'),
        ...list('var', 'ls -A /var'),
        ...list('home', 'ls -A /home'),
        ...list('opt', 'ls -A /opt 2>&1 || true'),
        ...list('ssh', 'ls -A /etc/ssh 2>&1 || true'),
        ...list('fds', 'ls /proc/self/fd -l | tail -n +2'),
        '    build:',
        '      html:',
        '        - mkdir -p $READTHEDOCS_OUTPUT/html',
        '        - echo listed > $READTHEDOCS_OUTPUT/html/index.html',
      ]),
    }));
  });

  it("holds the system directories, /etc, /dev, /proc, /tmp, /var/tmp, the build and its kept environment, and nothing of /run, the host's /home, /root, /srv, /mnt, /media or /var/lib", () => {
    const log = logOf(build);
    expect(build.success, log).toBe(true);
    const root = section(log, 'root').sort();
    const top = (p: string) => p.split('/')[1]!;
    const expected = new Set(['usr', 'etc', 'dev', 'proc', 'tmp', 'var']);
    for (const p of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) if (existsSync(p)) expected.add(top(p));
    // The paths Lectern's own PIP_* settings name (a wheel directory, a file:// index), read-only.
    for (const p of pipPaths()) if (existsSync(p)) expected.add(top(p));
    // The build's own directory, at its path (the data dir is under /tmp here, which is the build's own /tmp).
    expected.add(top(t.dataDir));
    // The version's kept environment, /home/docs/venv (docs/design/images.md "Caches"): Lectern's, not the host's /home.
    expected.add('home');
    expect(root).toEqual([...expected].sort());
    expect(section(log, 'home')).toEqual(['docs']);
    for (const absent of ['run', 'root', 'srv', 'mnt', 'media', 'boot', 'sys', 'work']) expect(root).not.toContain(absent);
    expect(section(log, 'var').sort()).toEqual(existsSync('/var/lib/texmf') ? ['lib', 'tmp'] : ['tmp']);
    const pipUnderOpt = pipPaths()
      .filter((p) => p.startsWith('/opt/') && existsSync(p))
      .map((p) => p.split('/')[2]!);
    if (pipUnderOpt.length) expect(section(log, 'opt').sort()).toEqual([...new Set(pipUnderOpt)].sort());
  });

  it('holds only the allowlisted /etc: no shadow files, sudoers or ssh host keys', () => {
    const log = logOf(build);
    const etc = section(log, 'etc');
    const allowed = new Set(ETC_ALLOWED.map((e) => e.split('/')[0]!));
    expect(etc.filter((e) => !allowed.has(e))).toEqual([]);
    for (const needed of ['passwd', 'group', 'hosts', 'nsswitch.conf', 'ssl', 'ld.so.cache']) if (existsSync(`/etc/${needed}`)) expect(etc).toContain(needed);
    for (const absent of ['shadow', 'gshadow', 'sudoers', 'machine-id', 'postgresql', 'subuid']) expect(etc).not.toContain(absent);
    expect(section(log, 'ssh').filter((e) => !['ssh_config', 'ssh_config.d', 'ssh_known_hosts'].includes(e) && !e.includes('No such file'))).toEqual([]);
  });

  it('gives the commands of a real build no descriptor above 2, with a network or without', () => {
    const log = logOf(build);
    for (const name of ['fds', 'network-fds']) {
      // Each line: "... <fd> -> <target>"; only 0, 1, 2 and the directory ls itself reads.
      const open = section(log, name).map((l) => /(\d+) -> (.*)$/.exec(l)!.slice(1));
      const extra = open.filter(([fd, target]) => Number(fd) > 2 && !/^\/proc\/\d+\/fd$/.test(target!));
      expect(extra, name).toEqual([]);
      expect(open.filter(([fd]) => Number(fd) > 2).length, name).toBeLessThanOrEqual(1);
    }
  });
});

describe('descriptors Lectern inherited', () => {
  const numbers = [9, 63, 200, 1023];
  let secret: string;
  let workdir: string;
  let ownWorkdir: string;
  const uid = 1_650_000_000 + (process.pid % 100_000);

  beforeAll(() => {
    const dir = mkdtempSync(path.join('/var/tmp', `${tag}-fd-`));
    scratch.push(dir);
    secret = path.join(dir, 'root-only.txt');
    writeFileSync(secret, 'ROOT-ONLY-SECRET\n', { mode: 0o600 });
    workdir = path.join(dir, 'work');
    mkdirSync(workdir, { mode: 0o700 });
    chownSync(workdir, uid, uid);
    ownWorkdir = path.join(dir, 'own');
    mkdirSync(ownWorkdir, { mode: 0o700 });
  });

  /** Runs `command` sandboxed from a Lectern-like process started with a root-only file open at `numbers`, without close-on-exec. */
  async function fromProcessWithDescriptors(user: string, network: 'net' | 'nonet', command: string) {
    const fd = openSync(secret, 'r');
    try {
      const stdio: ('ignore' | 'pipe' | number)[] = Array.from({ length: Math.max(...numbers) + 1 }, () => 'ignore');
      stdio[1] = 'pipe';
      stdio[2] = 'pipe';
      for (const n of numbers) stdio[n] = fd;
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', path.resolve(import.meta.dirname, '../helpers/sandboxed-command.ts'), user === '-' ? ownWorkdir : workdir, user, network, command],
        {
          stdio,
        },
      );
      let out = '';
      let err = '';
      child.stdout!.on('data', (b) => (out += b));
      child.stderr!.on('data', (b) => (err += b));
      const code = await new Promise((r) => child.once('close', r));
      expect(code, err).toBe(0);
      return JSON.parse(out) as { open: Record<string, string | null>; exitCode: number; output: string };
    } finally {
      closeSync(fd);
    }
  }

  const command = `ls -l /proc/self/fd | tail -n +2
for n in 3 4 ${numbers.join(' ')}; do if cat <&$n; then echo "fd $n READ"; else echo "fd $n closed"; fi; done 2>/dev/null
cat ${'$'}SECRET 2>/dev/null || echo secret-unreadable`;

  for (const [user, network, what] of [
    ['build', 'nonet', 'as the build user, no network'],
    ['build', 'net', 'as the build user, with the network of install steps'],
    ['-', 'nonet', "as Lectern's own user"],
  ] as const) {
    it(`are all closed before the command runs (${what}): it finds only 0, 1 and 2, and cannot read the file`, async () => {
      const r = await fromProcessWithDescriptors(user === 'build' ? String(uid) : '-', network, command.replace('$SECRET', secret));
      // The process that ran the sandbox had them, at each number.
      for (const n of numbers) expect(r.open[n], `fd ${n} in the parent`).toBe(secret);
      expect(r.exitCode, r.output).toBe(0);
      const listed = r.output
        .split('\n')
        .map((l) => /(\d+) -> (.*)$/.exec(l))
        .filter((m) => m !== null)
        .map((m) => [Number(m[1]), m[2]!] as const);
      expect(listed.filter(([fd, target]) => fd > 2 && !/^\/proc\/\d+\/fd$/.test(target))).toEqual([]);
      expect(listed.filter(([fd]) => fd <= 2).map(([fd]) => fd)).toEqual([0, 1, 2]);
      for (const n of [3, 4, ...numbers]) expect(r.output).toContain(`fd ${n} closed`);
      expect(r.output).not.toContain('READ');
      expect(r.output).not.toContain('ROOT-ONLY-SECRET');
      expect(r.output).toContain('secret-unreadable');
    });
  }
});

describe('programs a build leaves in its PATH', () => {
  it('run only inside its sandbox: Lectern starts bwrap and its helpers by their absolute paths', async () => {
    const names = ['bwrap', 'bash', 'prlimit', 'setpriv', 'nsenter', 'nft', 'slirp4netns', 'git', 'cat', 'env', 'sh'];
    const marker = (name: string) => path.join('/var/tmp', `${tag}-planted-${name}`);
    scratch.push(...names.map(marker)); // removed after the tests, should one appear
    // On the host, /var/tmp is the host's; in the sandbox it is the build's own /tmp.
    const plant = names.map(
      (n) =>
        `printf '#!/bin/sh\\necho planted > ${marker(n)}\\nexec /usr/bin/${n} "$@"\\n' > $READTHEDOCS_VIRTUALENV_PATH/bin/${n} && chmod +x $READTHEDOCS_VIRTUALENV_PATH/bin/${n}`,
    );
    const { build } = await buildOf('path-plant', {
      'plant.sh': `mkdir -p $READTHEDOCS_VIRTUALENV_PATH/bin $HOME/bin\n${plant.join('\n')}\n`,
      '.readthedocs.yaml': yaml([
        '  jobs:',
        '    pre_create_environment:',
        '      - bash plant.sh',
        '    pre_install:',
        '      - ls $READTHEDOCS_VIRTUALENV_PATH/bin',
        '    build:',
        '      html:',
        '        - mkdir -p $READTHEDOCS_OUTPUT/html',
        '        - echo planted > $READTHEDOCS_OUTPUT/html/index.html',
      ]),
    });
    const log = logOf(build);
    expect(log).toContain('bwrap'); // the planted programs were there, first in PATH, for every later step
    for (const n of names) expect(existsSync(marker(n)), `${n} ran on the host`).toBe(false);
    expect(build.success, `${build.error}\n${log}`).toBe(true);
  });
});

describe('configuration paths linked out of the checkout', () => {
  /** Host paths a link may name: existing files (root-only or not), a directory, missing ones, /proc. */
  let rootOnly: string;
  const targets = () => [
    '/etc/shadow',
    '/etc/hostname',
    '/etc/passwd',
    '/root',
    rootOnly,
    `/root/${tag}-missing`,
    '/nonexistent/lectern',
    '/proc/self/environ',
    '/var/run/postgresql',
    '../../../../../../../../etc/passwd',
    '../../../../../../../../nonexistent',
    '../..',
  ];

  beforeAll(() => {
    rootOnly = path.join('/root', `${tag}-root-only.txt`);
    writeFileSync(rootOnly, 'secret', { mode: 0o600 });
    scratch.push(rootOnly);
  });

  async function problemFor(files: Record<string, string>, links: [link: string, target: string][], yamlPath?: string): Promise<string> {
    const dir = mkdtempSync(path.join('/var/tmp', `${tag}-checkout-`));
    scratch.push(dir);
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), text);
    }
    for (const [link, target] of links) {
      mkdirSync(path.dirname(path.join(dir, link)), { recursive: true });
      symlinkSync(target, path.join(dir, link));
    }
    try {
      await loadBuildConfig(dir, { yamlPath });
    } catch (e) {
      if (e instanceof BuildConfigError) return e.message;
      throw e;
    }
    throw new Error(`${JSON.stringify(links)} was accepted`);
  }

  const cases: [string, Record<string, string>, string, string | undefined][] = [
    ['a requirements file', { '.readthedocs.yaml': yaml(['python:', '  install:', '    - requirements: docs/req.txt']) }, 'docs/req.txt', undefined],
    [
      'a directory on the way to a requirements file',
      { '.readthedocs.yaml': yaml(['python:', '  install:', '    - requirements: vendor/requirements.txt']) },
      'vendor',
      undefined,
    ],
    ['a python.install path', { '.readthedocs.yaml': yaml(['python:', '  install:', '    - path: pkg']) }, 'pkg', undefined],
    ['sphinx.configuration', { '.readthedocs.yaml': yaml(['sphinx:', '  configuration: docs/conf.py']) }, 'docs/conf.py', undefined],
    ['mkdocs.configuration', { '.readthedocs.yaml': yaml(['mkdocs:', '  configuration: mkdocs.yml']), 'docs/index.md': '# x\n' }, 'mkdocs.yml', undefined],
    ['conda.environment', { '.readthedocs.yaml': yaml(['conda:', '  environment: env.yml']) }, 'env.yml', undefined],
    ['.readthedocs.yaml', { 'docs/conf.py': '' }, '.readthedocs.yaml', undefined],
    ["the project's own configuration file path", { 'docs/conf.py': '' }, 'ci/rtd.yaml', 'ci/rtd.yaml'],
  ];
  for (const [what, files, link, yamlPath] of cases) {
    it(`answer the same for ${what}, whatever the link names on the host`, async () => {
      const answers = new Map<string, string>();
      for (const target of targets()) answers.set(target, await problemFor(files, [[link, target]], yamlPath));
      // Through links inside the checkout first, then out: the same answer too.
      const up = link.split('/').length > 1 ? '../' : '';
      for (const target of ['/etc/shadow', '/nonexistent/lectern']) {
        answers.set(
          `chain to ${target}`,
          await problemFor(
            files,
            [
              ['inner/second', target],
              ['first', 'inner/second'],
              [link, `${up}first`],
            ],
            yamlPath,
          ),
        );
      }
      const distinct = new Set(answers.values());
      expect(distinct.size, JSON.stringify(Object.fromEntries(answers), null, 1)).toBe(1);
      expect([...distinct][0]).toMatch(/symbolic link that points outside the repository/);
      expect([...distinct][0]).not.toMatch(/\b(shadow|hostname|passwd|nonexistent|environ|postgresql)\b|\/root/);
    });
  }

  it('through real builds: a requirements link answers the same whether its host target exists, is root-only or is missing; a link inside the checkout is followed', async () => {
    const repo = server.repo('oracle', {
      'docs/real-requirements.txt': '# nothing to install\n',
      '.readthedocs.yaml': yaml([
        '  commands:',
        '    - mkdir -p $READTHEDOCS_OUTPUT/html',
        '    - echo ok > $READTHEDOCS_OUTPUT/html/index.html',
        'python:',
        '  install:',
        '    - requirements: docs/requirements.txt',
      ]),
    });
    const project = await importProject(t, token, 'oracle', repo.url);
    await waitForBuild(t, await latestBuildOf(t, project.slug), 180_000);
    const link = path.join(repo.work, 'docs/requirements.txt');
    const errors = new Map<string, string | null>();
    for (const target of ['/etc/shadow', rootOnly, '/etc/hostname', `/root/${tag}-missing`, '../../../../etc/passwd', 'real-requirements.txt']) {
      if (existsSync(link) || isLink(link)) unlinkSync(link);
      symlinkSync(target, link);
      git(repo.work, 'add', '-A');
      git(repo.work, 'commit', '--quiet', '-m', `link to ${target}`);
      git(repo.work, 'push', '--quiet', 'origin', 'main');
      const build = await rebuild(project.slug);
      errors.set(target, build.success ? null : build.error);
    }
    // Inside the checkout: followed, and the build goes on.
    expect(errors.get('real-requirements.txt')).toBeNull();
    errors.delete('real-requirements.txt');
    const distinct = new Set(errors.values());
    expect(distinct.size, JSON.stringify(Object.fromEntries(errors), null, 1)).toBe(1);
    expect([...distinct][0]).toBe(
      'Reading the build configuration failed: .readthedocs.yaml: python.install[0].requirements: docs/requirements.txt is a symbolic link that points outside the repository',
    );
  });
});

function isLink(p: string): boolean {
  try {
    return readdirSync(path.dirname(p), { withFileTypes: true }).some((e) => e.name === path.basename(p) && e.isSymbolicLink());
  } catch {
    return false;
  }
}
