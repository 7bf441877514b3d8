// The sandbox's guarantees rechecked inside a build image (docs/design/images.md): a real build on
// Debian 13 tries to reach what is not its own: unix sockets of the host (PostgreSQL's directory,
// /run, /tmp, the data dir, an abstract one), host files (/root, /etc, the data dir), this
// machine over loopback and its own address, the image itself (read-only), and another build's
// layer; descriptors are closed and the process bound holds. Lectern runs as root, as the
// two-command install does.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readImage } from '../../src/builds/images.ts';
import type { Worker } from '../../src/builds/worker.ts';
import { bwrapAvailable, filteredNetworkAvailable, ownAddresses } from '../../src/sandbox/sandbox.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { type GitServer, startGitServer } from '../helpers/git.ts';
import { ensureTestImages } from '../helpers/images.ts';
import { freePort } from '../helpers/net.ts';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 30 * 60_000 });

let t: TestApp;
let server: GitServer;
let token: string;
let worker: Worker;
let imagesDir: string;
const tag = `lectern-image-isolation-${process.pid}`;
const servers: Server[] = [];
const scratch: string[] = [];
let log = '';
let success = false;
let buildId = 0;
let port = 0;
const sockets: [label: string, address: string][] = [];
const connections: string[] = [];

beforeAll(async () => {
  if (!bwrapAvailable()) throw new Error('bubblewrap (bwrap) is missing or cannot run here: apt-get install -y bubblewrap');
  if (!filteredNetworkAvailable()) throw new Error('slirp4netns and nftables are needed for the build network: apt-get install -y slirp4netns nftables');
  if (process.getuid?.() !== 0) throw new Error('these tests run Lectern as root, as the two-command install does');
  imagesDir = await ensureTestImages(['debian-13']);
  t = await testApp({ LECTERN_BUILD_IMAGES_DIR: imagesDir });
  server = await startGitServer();
  token = await t.user('mallory');
  worker = await startTestWorker(t);

  // Unix sockets anyone may connect to, where host services keep theirs, and an abstract one.
  for (const [label, dir] of [
    ['postgresql', '/var/run/postgresql'],
    ['run', '/run'],
    ['host-tmp', os.tmpdir()],
    ['var-lib', '/var/lib'],
    ['data-dir', t.dataDir],
  ] as const) {
    mkdirSync(dir, { recursive: true });
    sockets.push([label, path.join(dir, `${tag}-${label}.sock`)]);
  }
  sockets.push(['abstract', `\0${tag}-abstract`]);
  // A TCP listener on every address of this machine (loopback included).
  port = await freePort();
  for (const [, address] of sockets) servers.push(await listen(address, address));
  servers.push(await listen({ port, host: '0.0.0.0' }, `tcp ${port}`));
  // Files of the host's a build must not see.
  const secrets = ['/root', '/etc', t.dataDir].map((d) => path.join(d, `${tag}-secret`));
  for (const s of secrets) {
    writeFileSync(s, 'HOST-SECRET\n', { mode: 0o644 });
    scratch.push(s);
  }

  const probe = `import json, os, socket, sys
for label, address in json.loads(${JSON.stringify(JSON.stringify(sockets))}):
    try:
        s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(address); print('socket', label, 'REACHED')
    except Exception as e:
        print('socket', label, 'DENIED', type(e).__name__)
for address in ['127.0.0.1'] + json.loads(${JSON.stringify(JSON.stringify(ownAddresses()))}):
    try:
        s = socket.create_connection((address, ${port}), timeout=5); print('tcp', address, 'REACHED')
    except Exception as e:
        print('tcp', address, 'DENIED', type(e).__name__)
for path in json.loads(${JSON.stringify(JSON.stringify(secrets))}):
    print('file', path, 'READ' if os.path.exists(path) else 'ABSENT')
for path in ['/usr/bin/lectern-planted', '/etc/lectern-planted']:
    try:
        open(path, 'w').write('x'); print('write', path, 'WROTE')
    except Exception as e:
        print('write', path, 'REFUSED', type(e).__name__)
print('etc', open('/etc/debian_version').read().strip())
print('uid', os.getuid())
`;
  const yaml = [
    'version: 2',
    'build:',
    '  os: ubuntu-24.04',
    '  tools: {python: "3"}',
    '  jobs:',
    '    pre_install:',
    '      - python3 probe.py',
    '      - ls -l /proc/self/fd | tail -n +2 | sed "s/^/fd /"',
    '    build:',
    '      html:',
    '        - mkdir -p $READTHEDOCS_OUTPUT/html',
    '        - echo probed > $READTHEDOCS_OUTPUT/html/index.html',
    '',
  ].join('\n');
  const forks = `import os, time
n = 0
try:
    while n < 5000:
        if os.fork() == 0:
            time.sleep(3)
            os._exit(0)
        n += 1
    print('forks', n, 'none')
except OSError as e:
    print('forks', n, type(e).__name__)
try:
    while True: os.wait()
except ChildProcessError:
    pass
`;
  const build = await buildOf('image-probe', { 'probe.py': probe, '.readthedocs.yaml': yaml });
  log = logOf(build);
  success = build.success === true;
  buildId = build.id;
  // The process bound: a build cannot start more than its limit, whatever it tries.
  forkBuild = await buildOf('image-forks', {
    'forks.py': forks,
    '.readthedocs.yaml': yaml.replace(/ {4}pre_install:\n(.*\n)+? {4}build:/, '    pre_install:\n      - python3 forks.py\n    build:'),
  });
});

type BuildRow = Awaited<ReturnType<typeof waitForBuild>>;
let forkBuild: BuildRow;
const logOf = (b: BuildRow) => b.commands.map((c) => `$ ${c.command}\n${c.output}`).join('\n');

async function buildOf(name: string, files: Record<string, string>) {
  const repo = server.repo(name, files);
  const project = await importProject(t, token, name, repo.url);
  return waitForBuild(t, await latestBuildOf(t, project.slug), 300_000);
}

afterAll(async () => {
  await worker?.stop(1000);
  await server?.close();
  await t?.close();
  for (const s of servers) await new Promise((r) => s.close(r));
  for (const [, address] of sockets) if (!address.startsWith('\0')) rmSync(address, { force: true });
  for (const p of scratch) rmSync(p, { force: true });
});

function listen(address: string | { port: number; host: string }, label: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer((c) => {
      connections.push(label);
      c.end('HOST-ANSWERED');
    });
    s.once('error', reject);
    s.listen(address as never, () => resolve(s));
  });
}

describe('a build in an image', () => {
  it('runs on the image, as its own user, with no descriptor above 2', () => {
    expect(success, log).toBe(true);
    expect(log).toMatch(/^etc 13\.\d+$/m);
    expect(log).toMatch(/^uid [1-9]\d{4,}$/m); // a build user, not root
    // Each line: "fd ... <n> -> <target>"; only 0, 1, 2 and the directory ls itself reads.
    const open = [...log.matchAll(/^fd .* (\d+) -> (.*)$/gm)].map((m) => [Number(m[1]), m[2]!] as const);
    expect(open.filter(([fd]) => fd <= 2).map(([fd]) => fd)).toEqual([0, 1, 2]);
    expect(open.filter(([fd, target]) => fd > 2 && !/^\/proc\/\d+\/fd$/.test(target))).toEqual([]);
  });

  it("reaches no socket of the host's: not PostgreSQL's directory, /run, /tmp, /var/lib, the data dir, nor an abstract one", () => {
    for (const [label] of sockets) expect(log, label).toMatch(new RegExp(`^socket ${label} DENIED \\w+$`, 'm'));
    expect(connections.filter((c) => !c.startsWith('tcp'))).toEqual([]);
  });

  it('reaches this machine neither on loopback nor on its own addresses', () => {
    expect(log).toMatch(/^tcp 127\.0\.0\.1 DENIED \w+$/m);
    for (const a of ownAddresses()) expect(log, a).toMatch(new RegExp(`^tcp ${a.replace(/\./g, '\\.')} DENIED \\w+$`, 'm'));
    expect(connections).toEqual([]);
  });

  it("sees none of the host's files, and cannot write the image", async () => {
    expect(log).not.toContain('READ\n');
    expect(log.match(/^file .* ABSENT$/gm)).toHaveLength(3);
    expect(log).toMatch(/^write \/usr\/bin\/lectern-planted REFUSED OSError$/m);
    expect(log).toMatch(/^write \/etc\/lectern-planted REFUSED OSError$/m);
    const image = await readImage(imagesDir, 'debian-13');
    expect(log).not.toContain('WROTE');
    expect(image).not.toBeNull();
  });

  it('is bounded in processes: a fork bomb is stopped at the limit, and the build says so', () => {
    const forkLog = logOf(forkBuild);
    const forks = /^forks (\d+) (\w+)$/m.exec(forkLog);
    expect(forks, forkLog).not.toBeNull();
    expect(Number(forks![1])).toBeLessThan(t.config.build.maxProcesses);
    expect(forkBuild.success).toBe(false);
    expect(forkBuild.error).toContain(`the build reached its limit of ${t.config.build.maxProcesses} processes`);
  });

  it('leaves no layer behind', () => {
    expect(existsSync(path.join(t.dataDir, 'builds', `${buildId}.layer`))).toBe(false);
  });
});
