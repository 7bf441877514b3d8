// The `lectern` command as an operator runs it (docs/design/settings.md): `node src/bin.js …` in child
// processes, on a NEW install (empty data dir; on the postgres project also an empty database) that
// the first `serve` migrates, then users and tokens made from the command line, then `serve` again
// on the now EXISTING install, answering GraphQL with those tokens. The tests in the main describe
// build on each other and run in order. `serve` runs the server's bundle, as after `npm start`
// (made first here where the sources changed since: src/setup/server-bundle.ts).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { verifyPassword } from '../../src/domain/passwords.ts';
import { bundleServer } from '../../src/setup/server-bundle.ts';
import { emptyPostgresDatabase, tempDirs } from '../helpers/cli-databases.ts';
import { type CliResult, cliEnv, gql, killChildren, root, runCli, type Served, show, startServe } from '../helpers/cli-process.ts';
import { dbKind } from '../helpers/db.ts';
import { freePort } from '../helpers/net.ts';

const kind = dbKind();
const dirs = tempDirs();
let dataDir: string;
let databaseUrl: string | undefined;
let env: NodeJS.ProcessEnv;
let dropDatabase: (() => Promise<void>) | undefined;
const servers: Served[] = [];

const TOKEN = /^[0-9a-f]{40}$/;

async function lectern(...args: string[]): Promise<CliResult> {
  return runCli(args, env);
}

/** The token a successful `user create` / `token create` printed: alone on the last line of stdout. */
function tokenFrom(args: string[], r: CliResult): string {
  expect(r.code, show(args, r)).toBe(0);
  const lines = r.stdout.replace(/\n$/, '').split('\n');
  const last = lines.at(-1)!;
  expect(last, show(args, r)).toMatch(TOKEN);
  expect(r.stdout.endsWith(`\n${last}\n`) || r.stdout === `${last}\n`).toBe(true);
  return last;
}

async function serve(label: string): Promise<Served> {
  const s = await startServe(env);
  servers.push(s);
  console.log(
    `[startup] lectern serve on ${kind}, ${label}: ${Math.round(s.startupMs)} ms from spawn to /healthz 200 ` +
      `(the process itself reports startupMs=${String(s.listening.startupMs)} ms)`,
  );
  return s;
}

beforeAll(async () => {
  await bundleServer();
  dataDir = dirs.make('lectern-cli-');
  if (kind === 'postgres') {
    const db = await emptyPostgresDatabase();
    databaseUrl = db.url;
    dropDatabase = db.drop;
  }
  env = cliEnv({ LECTERN_DATA_DIR: dataDir, DATABASE_URL: databaseUrl });
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGKILL')));
  await killChildren();
  await dropDatabase?.().catch(() => {});
  dirs.cleanup();
});

describe(`lectern on ${kind}: a new install, then an existing one`, () => {
  let alice1: string;
  let alice2: string;

  it('`serve` on a NEW data dir migrates, answers /healthz and /readyz, and stops with 0 on SIGTERM', { timeout: 120_000 }, async () => {
    expect(existsSync(`${dataDir}/db`)).toBe(false);
    const s = await serve(`NEW data dir${kind === 'postgres' ? ' and empty database' : ''}`);
    expect(s.listening).toMatchObject({ level: 30, database: kind, modules: 'bundle' });
    const ready = await fetch(`${s.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', database: kind });
    // No users yet: it logs a one-time setup URL, whose code makes the first account, a site admin, once.
    const deadline = Date.now() + 10_000;
    while (!s.stdout().includes('setupUrl') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const setupUrl = /"setupUrl":"([^"]+)"/.exec(s.stdout())?.[1];
    expect(setupUrl, s.stdout()).toMatch(/\/setup\?code=[\w-]{32}$/);
    const code = new URL(setupUrl!).searchParams.get('code');
    const SET_UP = `mutation($input: SetUpInput!) { setUpFirstAdmin(input: $input) { __typename ... on MutationSetUpFirstAdminSuccess { data { username isAdmin } } ... on Error { message } } }`;
    const made = await gql(s.url, SET_UP, undefined, { input: { code, username: 'admin', password: 'admin-password-1' } });
    expect(made.body.data?.setUpFirstAdmin).toEqual({ __typename: 'MutationSetUpFirstAdminSuccess', data: { username: 'admin', isAdmin: true } });
    const again = await gql(s.url, SET_UP, undefined, { input: { code, username: 'admin2', password: 'admin-password-2' } });
    expect(again.body.data?.setUpFirstAdmin.__typename).toBe('ConflictError');
    expect(s.stdout()).not.toContain('admin-password');
    // It made the secret key once, and (embedded) holds the data dir.
    expect(existsSync(`${dataDir}/secret.key`)).toBe(true);
    if (kind === 'embedded') expect(existsSync(`${dataDir}/lectern.pid`)).toBe(true);
    const exit = await s.stop('SIGTERM');
    expect(exit, s.stderr()).toEqual({ code: 0, signal: null });
    expect(s.stdout()).toMatch(/"signal":"SIGTERM".*shutting down/);
    if (kind === 'embedded') expect(existsSync(`${dataDir}/lectern.pid`)).toBe(false);
  });

  it('`user create alice --email` prints a token alone on the last line of stdout', async () => {
    const args = ['user', 'create', 'alice', '--email', 'a@example.com'];
    alice1 = tokenFrom(args, await lectern(...args));
  });

  it('`token create alice` prints another token', async () => {
    alice2 = tokenFrom(['token', 'create', 'alice'], await lectern('token', 'create', 'alice'));
    expect(alice2).not.toBe(alice1);
  });

  it('`user create alice` again exits 1: already exists', async () => {
    const r = await lectern('user', 'create', 'alice');
    expect(r.code, show(['user', 'create', 'alice'], r)).toBe(1);
    expect(r.stderr).toMatch(/^lectern: username: A user with that username already exists\.$/m);
    expect(r.stdout).not.toMatch(TOKEN);
  });

  it('`token create nobody` exits 1 with a clear message', async () => {
    const r = await lectern('token', 'create', 'nobody');
    expect(r.code, show(['token', 'create', 'nobody'], r)).toBe(1);
    expect(r.stderr).toMatch(/^lectern: username: No user named "nobody"\.$/m);
    expect(r.stdout).toBe('');
  });

  it('`user create` with a bad username or email exits 1 naming the field', async () => {
    const r = await lectern('user', 'create', 'bad name!', '--email', 'not-an-email');
    expect(r.code, show(['user', 'create'], r)).toBe(1);
    expect(r.stderr).toMatch(/username: Enter a valid username/);
    expect(r.stderr).toMatch(/email: Enter a valid email address/);
  });

  it('`user create --admin --password-stdin` makes a site admin who can sign in; `user set-password` changes it; neither prints the password', async () => {
    const db = () => openDatabase({ dataDir, databaseUrl, migrate: false });
    const args = ['user', 'create', 'root', '--admin', '--password-stdin'];
    const r = await runCli(args, env, 60_000, 'first-secret-pw\n');
    tokenFrom(args, r);
    expect(r.stdout).toMatch(/^created site admin root;/);
    const set = await runCli(['user', 'set-password', 'root'], env, 60_000, 'second-secret-pw\n');
    expect(set.code, show(['user', 'set-password', 'root'], set)).toBe(0);
    const short = await runCli(['user', 'set-password', 'root', '--password', 'short'], env);
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/^lectern: password: This password is too short\./m);
    const nobody = await runCli(['user', 'set-password', 'nobody'], env, 60_000, 'whatever-pw-1\n');
    expect(nobody.stderr).toMatch(/^lectern: username: No user named "nobody"\.$/m);
    for (const out of [r, set, short, nobody]) expect(out.stdout + out.stderr).not.toMatch(/first-secret|second-secret/);
    const d = await db();
    try {
      const root = await d.prisma.user.findUniqueOrThrow({ where: { username: 'root' } });
      expect(root.isAdmin).toBe(true);
      expect(await verifyPassword(root.passwordHash, 'second-secret-pw')).toBe(true);
      await d.prisma.user.delete({ where: { username: 'root' } });
    } finally {
      await d.close();
    }
  });

  it('stores tokens hashed: no ApiToken column holds a key', async () => {
    const db = await openDatabase({ dataDir, databaseUrl, migrate: false });
    try {
      const rows = await db.prisma.$queryRawUnsafe<Record<string, unknown>[]>('SELECT * FROM "ApiToken" ORDER BY "id"');
      expect(rows).toHaveLength(2);
      const hashes = rows.map((r) => r.keyHash);
      expect(hashes).toEqual([alice1, alice2].map((k) => createHash('sha256').update(k).digest('hex')));
      for (const row of rows) {
        for (const [column, value] of Object.entries(row)) {
          for (const key of [alice1, alice2]) expect(String(value), `ApiToken.${column}`).not.toContain(key);
        }
      }
    } finally {
      await db.close();
    }
  });

  it('`token create alice` whose reader stops early (`| head -c 0`) still makes the token and exits 0, with no stack trace', async () => {
    // The reader's end of stdout is closed before the command writes (it writes once its database is open).
    const child = spawn(process.execPath, [path.join(root, 'src/bin.js'), 'token', 'create', 'alice'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const db = await openDatabase({ dataDir, databaseUrl, migrate: false });
    try {
      expect(await db.prisma.apiToken.count({ where: { user: { username: 'alice' } } })).toBe(3);
    } finally {
      await db.close();
    }
  });

  it('`serve` whose reader stops early (`| head -c 0`) keeps answering, and stops with 0 on SIGTERM', { timeout: 120_000 }, async () => {
    // The log is written to stdout as each line is logged (src/log.ts): the first line after the
    // reader went away fails with EPIPE, and the logging stops, not the server.
    const port = await freePort();
    const child = spawn(process.execPath, [path.join(root, 'src/bin.js'), 'serve'], {
      cwd: root,
      env: { ...env, HOST: '127.0.0.1', PORT: String(port), LECTERN_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const closed = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (code, signal) => resolve([code, signal])));
    try {
      let status = 0;
      for (const started = Date.now(); status !== 200 && Date.now() - started < 90_000; ) {
        status = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.status,
          () => new Promise<number>((r) => setTimeout(() => r(0), 100)),
        );
      }
      expect(status, stderr).toBe(200);
      const r = await gql(`http://127.0.0.1:${port}`, '{ viewer { username } }', alice1);
      expect(r.body, stderr).toEqual({ data: { viewer: { username: 'alice' } } });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await closed, stderr).toEqual([0, null]);
    expect(stderr).toBe('');
  });

  it('`serve` on the EXISTING data dir: both tokens authenticate on /graphql; a wrong one is refused', { timeout: 120_000 }, async () => {
    const s = await serve('EXISTING data dir');
    try {
      expect(s.stdout()).not.toContain('setupUrl');
      for (const token of [alice1, alice2]) {
        const r = await gql(s.url, '{ viewer { username } }', token);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body).toEqual({ data: { viewer: { username: 'alice' } } });
      }
      const anonymous = await gql(s.url, '{ viewer { username } }');
      expect(anonymous.body.data).toEqual({ viewer: null });
      const wrong = await gql(s.url, '{ viewer { username } }', '0'.repeat(40));
      expect(wrong.status).toBe(401);
      expect(wrong.body.errors?.[0]?.message).toBe('Invalid token.');

      // The CLI beside a running serve (docs/design/settings.md): works on both databases (on the
      // embedded one, the server runs it: test/cli/control.test.ts), and serve keeps working.
      const third = tokenFrom(['token', 'create', 'alice'], await lectern('token', 'create', 'alice'));
      expect((await gql(s.url, '{ viewer { username } }', third)).body.data).toEqual({ viewer: { username: 'alice' } });
      expect((await gql(s.url, '{ viewer { username } }', alice1)).body.data).toEqual({ viewer: { username: 'alice' } });
    } finally {
      const exit = await s.stop('SIGTERM');
      expect(exit, s.stderr()).toEqual({ code: 0, signal: null });
    }
  });

  it('`migrate` on the existing install has nothing to do', async () => {
    const r = await lectern('migrate');
    expect(r.code, show(['migrate'], r)).toBe(0);
    expect(r.stdout.trim()).toBe('the database is up to date');
  });

  it('a command refused before it opens the database (a bad setting, a missing name) leaves the data dir free and unharmed', async () => {
    // On the embedded database the command line starts PostgreSQL on an existing data dir, and
    // takes its lock, before it reads its settings or its arguments (docs/design/startup.md).
    const badSetting = await runCli(['token', 'create', 'alice'], { ...env, LECTERN_LOG_LEVEL: 'loud' });
    expect(badSetting.code, show(['token', 'create'], badSetting)).toBe(1);
    expect(badSetting.stderr).toMatch(/LECTERN_LOG_LEVEL/);
    const noName = await lectern('token', 'create');
    expect(noName.code, show(['token', 'create'], noName)).toBe(2);
    expect(existsSync(`${dataDir}/lectern.pid`)).toBe(false);
    tokenFrom(['token', 'create', 'alice'], await lectern('token', 'create', 'alice'));
    expect(existsSync(`${dataDir}/lectern.pid`)).toBe(false);
  });

  it('`serve` stops with 0 on a SIGTERM sent the moment it says it listens, its build worker still starting', { timeout: 120_000 }, async () => {
    for (let i = 0; i < 3; i++) {
      const s = await startServe(env);
      servers.push(s);
      const exit = await s.stop('SIGTERM');
      expect(exit, s.stderr()).toEqual({ code: 0, signal: null });
    }
  });

  it('`search reindex` indexes what is published (nothing yet here), and names a project that does not exist', async () => {
    const r = await lectern('search', 'reindex');
    expect(r.code, show(['search', 'reindex'], r)).toBe(0);
    expect(r.stdout.trim()).toBe('indexed 0 version(s)');
    const nope = await lectern('search', 'reindex', 'nope');
    expect(nope.code).toBe(1);
    expect(nope.stderr).toMatch(/^lectern: project: No project "nope"\.$/m);
  });
});

/** The command lines of the processes whose parent is `pid` (Linux's /proc). */
function childCommandLines(pid: number): string[][] {
  const out: string[][] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe(`lectern on ${kind}, as the shell runs it (node_modules/.bin on PATH, src/bin.js by its shebang)`, () => {
  it('`token create` prints a token; `serve` runs without the one-shot flags (V8 optimizes its code for the long run) and stops with 0 on SIGTERM', {
    timeout: 120_000,
  }, async () => {
    const args = ['token', 'create', 'alice'];
    tokenFrom(args, await runCli(args, env, 60_000, undefined, true));
    const s = await startServe(env, 90_000, true);
    servers.push(s);
    // The shebang starts Node with --liftoff-only and the other one-shot flags; `serve` starts again
    // without them, so PGlite, Prisma and Lectern's own code get V8's optimizing compilers for the long run.
    const [server, ...others] = childCommandLines(s.child.pid!);
    expect(others).toEqual([]);
    expect(server).toContain('serve');
    for (const flag of ['--liftoff-only', '--no-opt', '--no-maglev', '--wasm-lazy-validation', '--max-semi-space-size']) expect(server).not.toContain(flag);
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    const exit = await s.stop('SIGTERM');
    expect(exit, s.stderr()).toEqual({ code: 0, signal: null });
  });
});
