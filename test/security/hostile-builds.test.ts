// Hostile repositories against a real Lectern (worker in-process, git over a real protocol from a
// test host, bubblewrap, slirp4netns, nftables), run as root as the two-command install runs it.
// Each attack is a repository a user imports; each test checks the attack failed, the build's log
// says why, and an ordinary build of the same project right after succeeds.
// @see issue 9, README "Security model"
import { type ChildProcess, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { bwrapAvailable, filteredNetworkAvailable, ownAddresses } from '../../src/sandbox/sandbox.ts';
import { Cipher } from '../../src/secrets.ts';
import { TEST_SECRET_KEY, type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, sphinxFiles, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { ensureTestHost, type GitServer, git, spawnOnTestHost, startGitServer, TEST_HOST, TEST_NETNS } from '../helpers/git.ts';

// Each test runs two real builds (the attack, then an ordinary one).
vi.setConfig({ testTimeout: 240_000 });

const MiB = 1024 ** 2;
let t: TestApp;
let server: GitServer;
let token: string;
let worker: Worker;
let storageDir: string;
let listener: Server;
let listenerPort: number;
let testHostServer: ChildProcess;
const TEST_HOST_PORT = 8719;
/** Addresses on the test host outside the allowed range: a private one and a link-local one. */
const PRIVATE_NOT_ALLOWED = '10.214.0.2';
const LINK_LOCAL = '169.254.77.1';

beforeAll(async () => {
  if (!bwrapAvailable()) throw new Error('bubblewrap (bwrap) is missing or cannot run here: apt-get install -y bubblewrap');
  if (!filteredNetworkAvailable()) throw new Error('slirp4netns and nftables are needed for the build network: apt-get install -y slirp4netns nftables');
  if (process.getuid?.() !== 0) throw new Error('these tests run Lectern as root, as the two-command install does');
  storageDir = mkdtempSync(path.join('/var/tmp', 'lectern-hostile-storage-'));
  t = await testApp({
    LECTERN_STORAGE: `file:${storageDir}`,
    // Bounds low enough to reach quickly; each is a setting with a larger default.
    LECTERN_BUILD_MAX_PROCESSES: '64',
    LECTERN_BUILD_MAX_MEMORY_BYTES: String(512 * MiB),
    LECTERN_BUILD_MAX_DISK_BYTES: String(400 * MiB),
    LECTERN_BUILD_MAX_PUBLISH_BYTES: String(8 * MiB),
    LECTERN_BUILD_MAX_PUBLISH_FILES: '500',
    LECTERN_BUILD_LOG_COMMAND_BYTES: String(256 * 1024),
    LECTERN_BUILD_LOG_BYTES: String(1 * MiB),
  });
  server = await startGitServer();
  token = await t.user('mallory');
  worker = await startTestWorker(t);
  // Services a build must not reach: one on this machine (all its addresses), and on the test host
  // one at addresses of classes that are never allowed (traffic that got past the firewall would
  // still stay on this machine's own test network).
  listener = createServer((s) => s.end('lectern-internal'));
  await new Promise<void>((r) => listener.listen(0, '0.0.0.0', r));
  listenerPort = (listener.address() as { port: number }).port;
  ensureTestHost();
  for (const [addr, net] of [
    [PRIVATE_NOT_ALLOWED, '10.214.0.0/24'],
    [LINK_LOCAL, `${LINK_LOCAL}/32`],
  ] as const) {
    try {
      execFileSync('ip', ['-n', TEST_NETNS, 'addr', 'add', `${addr}/32`, 'dev', 'veth-lt1'], { stdio: 'pipe' });
    } catch {} // already there from another test file
    try {
      execFileSync('ip', ['route', 'replace', net, 'dev', 'veth-lt0'], { stdio: 'pipe' });
    } catch {}
  }
  testHostServer = spawnOnTestHost(
    'python3',
    [
      '-c',
      `
import socket, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('0.0.0.0', ${TEST_HOST_PORT})); s.listen(50)
while True:
    c, _ = s.accept(); c.sendall(b'test-host'); c.close()
`,
    ],
    { stdio: 'ignore' },
  );
  // The test host answers from this machine at every one of its addresses.
  for (const addr of [TEST_HOST, PRIVATE_NOT_ALLOWED, LINK_LOCAL]) await expectReachable(addr, TEST_HOST_PORT);
});

afterAll(async () => {
  await worker?.stop(1000);
  testHostServer?.kill();
  listener?.close();
  await server?.close();
  await t?.close();
  if (storageDir) rmSync(storageDir, { recursive: true, force: true });
});

async function expectReachable(host: string, port: number) {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      execFileSync('python3', ['-c', `import socket; socket.create_connection((${JSON.stringify(host)}, ${port}), timeout=2).recv(4)`], { stdio: 'pipe' });
      return;
    } catch (e) {
      if (Date.now() > until) throw new Error(`${host}:${port} not reachable from the test itself: ${e}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const yaml = (lines: string[]) => ['version: 2', 'build:', '  os: ubuntu-22.04', '  tools: {python: "3.11"}', ...lines, ''].join('\n');
/** An ordinary build.commands project. */
const ordinary = (extra: string[] = []) =>
  yaml(['  commands:', '    - mkdir -p $READTHEDOCS_OUTPUT/html', '    - echo "<h1>ordinary</h1>" > $READTHEDOCS_OUTPUT/html/index.html', ...extra]);

type BuildRow = Awaited<ReturnType<typeof waitForBuild>>;
const logOf = (b: BuildRow) => b.commands.map((c) => `$ ${c.command}\n${c.output}`).join('\n');

/** Imports `files` as a new project, waits for its first build, returns it with the project. */
async function attack(name: string, files: Record<string, string>, timeoutMs = 180_000) {
  const repo = server.repo(name, files);
  const p = await importProject(t, token, name, repo.url);
  const build = await waitForBuild(t, await latestBuildOf(t, p.slug), timeoutMs);
  return { repo, project: p, build };
}

/** Pushes an ordinary project over the attack and builds it: it must succeed and be served. */
async function thenOrdinaryBuildSucceeds(a: Awaited<ReturnType<typeof attack>>) {
  a.repo.commit({ '.readthedocs.yaml': ordinary() }, 'ordinary');
  git(a.repo.work, 'push', '--quiet', 'origin', 'main');
  const res = await t.http.post(`/api/v3/projects/${a.project.slug}/versions/latest/builds/`).set('authorization', `Token ${token}`);
  expect(res.status).toBe(202);
  const build = await waitForBuild(t, res.body.build.id, 120_000);
  expect(build.success, `${build.error}\n${logOf(build)}`).toBe(true);
  const page = await t.http.get(`/docs/${a.project.slug}/en/latest/`).set('authorization', `Token ${token}`);
  expect(page.status).toBe(200);
  expect(page.text).toContain('ordinary');
}

/** Nothing of the attack's build is in storage. */
async function nothingPublished(projectSlug: string, buildId: number) {
  const keys = await t.storage.list(`projects/${projectSlug}/`);
  expect(keys.filter((k) => k.includes(`/${buildId}/`))).toEqual([]);
}

describe("files that are not the build's own regular files are never published", () => {
  const HTML_JOB = ['      html:', '        - mkdir -p $READTHEDOCS_OUTPUT/html', '        - echo hi > $READTHEDOCS_OUTPUT/html/index.html'];
  const cases: [string, string, string[], RegExp][] = [
    [
      'epub-symlink',
      'a symlink left as the epub',
      [...HTML_JOB, '      epub:', '        - mkdir -p $READTHEDOCS_OUTPUT/epub', '        - ln -s /proc/self/environ $READTHEDOCS_OUTPUT/epub/x.epub'],
      /symbolic link/,
    ],
    [
      'pdf-to-secret-key',
      "a symlink to the data dir's secret key as the pdf",
      [...HTML_JOB, '      pdf:', '        - mkdir -p $READTHEDOCS_OUTPUT/pdf', '        - ln -s DATADIR/secret.key $READTHEDOCS_OUTPUT/pdf/x.pdf'],
      /symbolic link/,
    ],
    [
      'html-symlink-dir',
      'a symlinked directory in the HTML',
      [
        '      html:',
        '        - mkdir -p $READTHEDOCS_OUTPUT/html',
        '        - echo hi > $READTHEDOCS_OUTPUT/html/index.html',
        '        - ln -s /etc $READTHEDOCS_OUTPUT/html/etc',
      ],
      /symbolic link/,
    ],
    [
      'html-to-storage',
      "a link to another project's stored files",
      [
        '      html:',
        '        - mkdir -p $READTHEDOCS_OUTPUT/html',
        '        - echo hi > $READTHEDOCS_OUTPUT/html/index.html',
        '        - ln -s STORAGE/projects $READTHEDOCS_OUTPUT/html/others',
      ],
      /symbolic link/,
    ],
    [
      'html-hard-link',
      'a hard link in the HTML',
      [
        '      html:',
        '        - mkdir -p $READTHEDOCS_OUTPUT/html',
        '        - echo hi > $READTHEDOCS_OUTPUT/html/index.html',
        '        - ln README.md $READTHEDOCS_OUTPUT/html/readme.html',
      ],
      /hard link|links/,
    ],
    [
      'html-fifo',
      'a fifo in the HTML',
      [
        '      html:',
        '        - mkdir -p $READTHEDOCS_OUTPUT/html',
        '        - echo hi > $READTHEDOCS_OUTPUT/html/index.html',
        '        - mkfifo $READTHEDOCS_OUTPUT/html/pipe.html',
      ],
      /fifo|not a regular file/,
    ],
    [
      'html-socket',
      'a unix socket in the HTML',
      [
        '      html:',
        '        - mkdir -p $READTHEDOCS_OUTPUT/html',
        '        - echo hi > $READTHEDOCS_OUTPUT/html/index.html',
        `        - python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('$READTHEDOCS_OUTPUT/html/s.html')"`,
      ],
      /socket|not a regular file/,
    ],
  ];
  for (const [name, what, jobs, message] of cases) {
    it(`refuses ${what}`, async () => {
      const files = {
        'README.md': 'readme\n',
        '.readthedocs.yaml': yaml(['  jobs:', '    build:', ...jobs.map((l) => l.replace('DATADIR', t.dataDir).replace('STORAGE', storageDir))]).replace(
          /\n$/,
          '\nformats: [epub, pdf]\n',
        ),
      };
      const a = await attack(name, files);
      expect(a.build.success, logOf(a.build)).toBe(false);
      expect(a.build.error).toMatch(/^Publishing failed: /);
      expect(a.build.error).toMatch(message);
      await nothingPublished(a.project.slug, a.build.id);
      const download = await t.http.get(`/_/downloads/${a.project.slug}/en/latest/epub/`).set('authorization', `Token ${token}`);
      expect(download.status).toBe(404);
      await thenOrdinaryBuildSucceeds(a);
    });
  }

  it("refuses a link that conf.py plants in place of the epub during Sphinx's own epub step", async () => {
    const conf = `project = 'Planted'
html_theme = 'alabaster'
import os, glob
def plant(app, exc):
    if app.builder.name == 'epub':
        for f in glob.glob(os.path.join(app.outdir, '*.epub')):
            os.remove(f)
            os.symlink('/proc/self/environ', f)
def setup(app):
    app.connect('build-finished', plant)
`;
    const a = await attack('planted-epub', {
      ...sphinxFiles({ 'docs/conf.py': conf }),
      '.readthedocs.yaml': `${yaml([])}sphinx:\n  configuration: docs/conf.py\nformats: [epub]\n`,
    });
    expect(a.build.success, logOf(a.build)).toBe(false);
    expect(a.build.error).toMatch(/^Publishing failed: .*epub.*symbolic link/s);
    await nothingPublished(a.project.slug, a.build.id);
    await thenOrdinaryBuildSucceeds(a);
  });
});

describe('variables that change how programs run', () => {
  it("are left out of builds when a row predates the rule, and the repository's programs never run outside the sandbox", async () => {
    const marker = path.join(os.tmpdir(), `lectern-pwned-${process.pid}`);
    const evil = `#!/bin/sh\necho pwned > ${marker}\nexec /usr/bin/$(basename $0) "$@"\n`;
    const repo = server.repo('path-hijack', {
      'README.md': 'x',
      '.readthedocs.yaml': ordinary([
        '    - echo "PATH is $PATH"',
        '    - env | sort | grep -E "^(LD_|GIT_CONFIG|PYTHONSTARTUP)" || echo "no dangerous variables"',
      ]),
    });
    // The variables are written as an older Lectern let them be: straight into the table.
    const p = await importProject(t, token, 'path-hijack', repo.url);
    await waitForBuild(t, await latestBuildOf(t, p.slug));
    const cipher = new Cipher(TEST_SECRET_KEY);
    for (const [name, value] of [
      ['PATH', 'bin:/usr/bin:/bin'],
      ['LD_PRELOAD', '/nonexistent/evil.so'],
      ['GIT_CONFIG_COUNT', '1'],
      ['PYTHONSTARTUP', 'evil.py'],
      ['BASH_ENV', 'evil.sh'],
    ]) {
      await t.db.prisma.environmentVariable.create({
        data: { projectId: p.id, name, valueEncrypted: cipher.encrypt(value), valueSize: value.length, public: false },
      });
    }
    repo.commit({
      'bin/cat': evil,
      'bin/git': evil,
      'evil.sh': `echo pwned > ${marker}\n`,
      'evil.py': `open(${JSON.stringify(marker)}, 'w').write('pwned')\n`,
    });
    execFileSync('chmod', ['+x', path.join(repo.work, 'bin/cat'), path.join(repo.work, 'bin/git')]);
    git(repo.work, 'add', '-A');
    git(repo.work, 'commit', '--quiet', '-m', 'exec bits');
    git(repo.work, 'push', '--quiet', 'origin', 'main');
    const res = await t.http.post(`/api/v3/projects/${p.slug}/versions/latest/builds/`).set('authorization', `Token ${token}`);
    const build = await waitForBuild(t, res.body.build.id);
    expect(build.success, logOf(build)).toBe(true);
    const log = logOf(build);
    for (const name of ['PATH', 'LD_PRELOAD', 'GIT_CONFIG_COUNT', 'PYTHONSTARTUP', 'BASH_ENV']) {
      expect(log).toMatch(new RegExp(`environment variable ${name} was left out of this build`));
    }
    expect(log).toContain('no dangerous variables');
    expect(log).not.toMatch(/PATH is bin:/);
    expect(existsSync(marker)).toBe(false);
  });

  it('are refused when created, through GraphQL and REST, naming the rule', async () => {
    const repo = server.repo('vars', { 'README.md': 'x', '.readthedocs.yaml': ordinary() });
    const p = await importProject(t, token, 'vars', repo.url);
    for (const name of ['PATH', 'LD_PRELOAD', 'GIT_SSH_COMMAND', 'PYTHONPATH', 'BASH_ENV', 'NODE_OPTIONS', 'HOME', 'READTHEDOCS_OUTPUT']) {
      const g = await t.gql(
        `mutation($n: String!) { createEnvironmentVariable(project: "${p.slug}", input: {name: $n, value: "x"}) { __typename ... on Error { message } } }`,
        { n: name },
        token,
      );
      expect(g.data.createEnvironmentVariable.__typename, name).not.toMatch(/Success/);
      // The message names the field and the rule (a prefix or the name itself).
      expect(g.data.createEnvironmentVariable.message, name).toMatch(/^name: Variable name/);
      expect(g.data.createEnvironmentVariable.message, name).toMatch(new RegExp(name.slice(0, 3), 'i'));
      const r = await t.http.post(`/api/v3/projects/${p.slug}/environmentvariables/`).set('authorization', `Token ${token}`).send({ name, value: 'x' });
      expect(r.status, name).toBe(400);
    }
    expect(await t.db.prisma.environmentVariable.count({ where: { projectId: p.id } })).toBe(0);
  });
});

describe('the network of install steps reaches the outside world only', () => {
  it("refuses loopback, this machine's addresses, link-local and private ranges not allowed; the build step has none", async () => {
    const own = ownAddresses().filter((a) => !a.startsWith('127.'));
    const targets = [
      ['loopback', '127.0.0.1', listenerPort],
      ...own.map((a) => [`own ${a}`, a, listenerPort] as const),
      ['gateway to the host', '10.0.2.2', listenerPort],
      ['link-local', LINK_LOCAL, TEST_HOST_PORT],
      ['private, not allowed', PRIVATE_NOT_ALLOWED, TEST_HOST_PORT],
      ['allowed test host', TEST_HOST, TEST_HOST_PORT],
    ] as const;
    const probe = (step: string) =>
      `python3 -c "import socket
for name, host, port in ${JSON.stringify(targets).replace(/"/g, "'")}:
    try:
        print('${step}', name, 'REACHED', socket.create_connection((host, port), timeout=3).recv(20))
    except Exception as e:
        print('${step}', name, 'DENIED', type(e).__name__)"`;
    const files = {
      'probe.sh': `${probe('$1')}\n`,
      '.readthedocs.yaml': yaml([
        '  jobs:',
        '    post_checkout:',
        '      - bash probe.sh post_checkout',
        '    pre_install:',
        '      - bash probe.sh pre_install',
        '    pre_build:',
        '      - bash probe.sh pre_build',
        '    build:',
        '      html:',
        '        - mkdir -p $READTHEDOCS_OUTPUT/html',
        '        - echo probed > $READTHEDOCS_OUTPUT/html/index.html',
      ]),
    };
    const a = await attack('network-probe', files);
    const log = logOf(a.build);
    expect(a.build.success, log).toBe(true);
    for (const step of ['post_checkout', 'pre_install']) {
      for (const [name] of targets) {
        const expected = name === 'allowed test host' ? 'REACHED' : 'DENIED';
        expect(log, `${step} ${name}`).toContain(`${step} ${name} ${expected}`);
      }
    }
    // The build step has no network at all.
    for (const [name] of targets) expect(log).toContain(`pre_build ${name} DENIED`);
    expect(log).not.toContain('lectern-internal');
    await thenOrdinaryBuildSucceeds(a);
  });

  it('cannot clone from, or sync versions with, an address it may not reach', async () => {
    const res = await t.gql(
      `mutation($input: ImportProjectInput!) { importProject(input: $input) { ... on MutationImportProjectSuccess { data { slug } } ... on Error { message } } }`,
      { input: { name: 'internal-clone', repository: { url: `http://127.0.0.1:${listenerPort}/repo.git` } } },
      token,
    );
    const slug = res.data.importProject.data?.slug;
    expect(slug).toBeTruthy();
    const build = await waitForBuild(t, await latestBuildOf(t, slug));
    expect(build.success).toBe(false);
    expect(build.error).toMatch(/^Cloning failed/);
    expect(logOf(build)).not.toContain('lectern-internal');
  });
});

describe('bounds: the build fails or is cut short, never the server', () => {
  const bounded: [string, string, string, RegExp][] = [
    ['fork-bomb', 'a fork bomb', 'bomb() { bomb | bomb & }; bomb; sleep 5', /limit of 64 processes \(LECTERN_BUILD_MAX_PROCESSES\)/],
    ['memory-hog', 'a memory hog', `python3 -c "x = bytearray(2 * 1024**3); print(len(x))"`, /memory limit of 512 MiB|MemoryError/],
    ['big-file', 'a 1 GB output file', 'head -c 1G /dev/zero > $READTHEDOCS_OUTPUT/html/big.bin', /disk limit of 400 MiB \(LECTERN_BUILD_MAX_DISK_BYTES\)/],
    ['big-publish', 'more than a build may publish', 'head -c 12M /dev/urandom > $READTHEDOCS_OUTPUT/html/blob.bin', /LECTERN_BUILD_MAX_PUBLISH_BYTES/],
    [
      'many-files',
      'more files than a build may publish',
      'for i in $(seq 1 600); do echo $i > $READTHEDOCS_OUTPUT/html/p$i.html; done',
      /LECTERN_BUILD_MAX_PUBLISH_FILES/,
    ],
  ];
  for (const [name, what, command, message] of bounded) {
    it(`stops ${what}`, async () => {
      const a = await attack(name, { '.readthedocs.yaml': ordinary([`    - ${JSON.stringify(command)}`]) });
      expect(a.build.success, logOf(a.build)).toBe(false);
      expect(`${a.build.error}\n${logOf(a.build)}`).toMatch(message);
      await nothingPublished(a.project.slug, a.build.id);
      await thenOrdinaryBuildSucceeds(a);
    });
  }

  it('keeps 4 GB of output out of memory and out of the log, and the build goes on', async () => {
    const before = process.memoryUsage().rss;
    const a = await attack('chatty', { '.readthedocs.yaml': ordinary([`    - "head -c 4G /dev/zero | tr '\\\\0' x"`]) }, 540_000);
    expect(a.build.success, a.build.error ?? '').toBe(true);
    const total = a.build.commands.reduce((n, c) => n + c.output.length, 0);
    expect(total).toBeLessThan(2 * MiB);
    expect(logOf(a.build)).toMatch(/not kept/);
    expect(process.memoryUsage().rss - before).toBeLessThan(512 * MiB);
    await thenOrdinaryBuildSucceeds(a);
  }, 600_000);
});

describe('as root, a build runs as a user of its own', () => {
  it('cannot read what that user cannot (/etc/shadow), nor the data dir', async () => {
    const a = await attack('root-reader', {
      '.readthedocs.yaml': ordinary([
        '    - id -u',
        '    - cat /etc/shadow && echo READ-SHADOW || echo "shadow denied"',
        `    - ls ${t.dataDir}/secret.key 2>&1 || echo "no secret key"`,
      ]),
    });
    const log = logOf(a.build);
    expect(a.build.success, log).toBe(true);
    expect(log).toContain('shadow denied');
    expect(log).not.toMatch(/^READ-SHADOW$/m);
    expect(log).not.toMatch(/^root:/m);
    expect(log).toContain('no secret key');
    const uid = Number(/^(\d{4,})$/m.exec(log)?.[1]);
    expect(uid).toBeGreaterThan(0);
    expect(uid).toBe(t.config.build.uidBase + (a.build.id % 100_000));
  });
});
