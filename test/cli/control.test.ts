// The command line beside a running `lectern serve` on the embedded database (docs/design/startup.md
// "Commands beside a running server"): the server holds the data dir, and the database commands
// are sent to it over the data dir's control socket and answered as if run alone. What an operator
// checks: the commands work and their tokens sign in, the socket is theirs only (0600), it goes
// away with the server, a server killed with SIGKILL leaves nothing that stops the next command or
// start, and whatever else connects to the socket (garbage, another version, a request with fields
// no command has, a flood) is refused with a message and changes nothing. Embedded database only:
// on PostgreSQL every command opens its own connection (test/cli/cli.test.ts).
import { statSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/cli-databases.ts';
import { type CliResult, cliEnv, gql, killChildren, runCli, type Served, show, startServe } from '../helpers/cli-process.ts';

const dirs = tempDirs();
let dataDir: string;
let env: NodeJS.ProcessEnv;

const lectern = (args: string[], stdin?: string): Promise<CliResult> => runCli(args, env, 60_000, stdin);

/** The token a command printed alone on its last line. */
function tokenOf(args: string[], r: CliResult): string {
  expect(r.code, show(args, r)).toBe(0);
  const last = r.stdout.trimEnd().split('\n').at(-1)!;
  expect(last, show(args, r)).toMatch(/^[0-9a-f]{40}$/);
  return last;
}

/** Sends `raw` to the control socket as is and returns what comes back. */
function rawRequest(raw: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(path.join(dataDir, 'lectern.sock'));
    let text = '';
    s.setEncoding('utf8');
    s.on('connect', () => s.end(raw));
    s.on('data', (d: string) => (text += d));
    s.on('error', reject);
    s.on('close', () => resolve(text));
  });
}

const viewer = async (url: string, token: string) => (await gql(url, '{ viewer { username isAdmin } }', token)).body;

beforeAll(() => {
  dataDir = dirs.make('lectern-control-');
  env = cliEnv({ LECTERN_DATA_DIR: dataDir, LECTERN_BUILD_CONCURRENCY: '0' });
});

afterAll(async () => {
  await killChildren();
  dirs.cleanup();
});

describe('the command line beside a running lectern serve (embedded database)', () => {
  let s: Served;

  it('user create, token create, set-password and search reindex run in the server; their tokens sign in; nothing secret is logged', {
    timeout: 120_000,
  }, async () => {
    s = await startServe(env);
    const socket = statSync(path.join(dataDir, 'lectern.sock'));
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o600);

    const create = ['user', 'create', 'carol', '--admin', '--password-stdin'];
    const created = await lectern(create, 'carol-first-secret\n');
    const first = tokenOf(create, created);
    expect(created.stdout).toMatch(/^created site admin carol; API token \(shown once\):\n/);
    expect(await viewer(s.url, first)).toEqual({ data: { viewer: { username: 'carol', isAdmin: true } } });

    const second = tokenOf(['token', 'create', 'carol'], await lectern(['token', 'create', 'carol']));
    expect(await viewer(s.url, second)).toEqual({ data: { viewer: { username: 'carol', isAdmin: true } } });

    const set = await lectern(['user', 'set-password', 'carol'], 'carol-second-secret\n');
    expect(set.code, show(['user', 'set-password'], set)).toBe(0);
    expect(set.stdout).toBe('password of carol set\n');
    // Signing in as a browser on Lectern's own origin does (the public URL the server logged).
    const origin = String(s.listening.url).replace(/\/$/, '');
    const signIn = await fetch(`${s.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', origin },
      body: JSON.stringify({
        query: 'mutation($p: String!) { signIn(username: "carol", password: $p) { __typename } }',
        variables: { p: 'carol-second-secret' },
      }),
    });
    expect(await signIn.json()).toEqual({ data: { signIn: { __typename: 'MutationSignInSuccess' } } });

    // Bad input is answered as when run alone: exit 1, the field and what is wrong, in words.
    const again = await lectern(['user', 'create', 'carol']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^lectern: username: /m);
    const nobody = await lectern(['token', 'create', 'nobody']);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toBe('lectern: username: No user named "nobody".\n');
    const short = await lectern(['user', 'set-password', 'carol', '--password', 'short']);
    expect(short.stderr).toMatch(/^lectern: password: This password is too short\./m);
    const reindex = await lectern(['search', 'reindex']);
    expect(reindex.stdout).toBe('indexed 0 version(s)\n');
    const noProject = await lectern(['search', 'reindex', 'nope']);
    expect(noProject.code).toBe(1);
    expect(noProject.stderr).toBe('lectern: project: No project "nope".\n');
    const migrate = await lectern(['migrate']);
    expect(migrate.code, show(['migrate'], migrate)).toBe(0);
    expect(migrate.stdout).toBe('the database is up to date\n');

    const log = s.stdout() + s.stderr();
    expect(log).toContain('"command":"token create","username":"carol"');
    for (const secret of ['carol-first-secret', 'carol-second-secret', first, second]) expect(log).not.toContain(secret);
  });

  it('garbage, another version, unknown fields and a flood are refused with a message, and change nothing', async () => {
    const answer = async (raw: string) => JSON.parse(await rawRequest(raw)) as { code: number; stdout: string; stderr: string };
    expect(await answer('not json\n')).toEqual({ code: 2, stdout: '', stderr: 'lectern: the control socket expects one JSON request\n' });
    const other = await answer(`${JSON.stringify({ version: 99, request: { command: 'token create', username: 'carol' } })}\n`);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/another version of Lectern: run this command from the same checkout as the server/);
    // A field no command has (an attempt to make a site admin by a token request) is not ignored: refused.
    const extra = await answer(`${JSON.stringify({ version: 1, request: { command: 'token create', username: 'mallory', admin: true } })}\n`);
    expect(extra).toEqual({ code: 2, stdout: '', stderr: 'lectern: the request is malformed\n' });
    const unknown = await answer(`${JSON.stringify({ version: 1, request: { command: 'user delete', username: 'carol' } })}\n`);
    expect(unknown.code).toBe(2);
    const flood = await answer('x'.repeat(200_000));
    expect(flood).toEqual({ code: 2, stdout: '', stderr: 'lectern: the request is too long\n' });
    // Nothing was made, and the server serves on.
    const mallory = await lectern(['token', 'create', 'mallory']);
    expect(mallory.stderr).toBe('lectern: username: No user named "mallory".\n');
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
  });

  it('SIGTERM removes the socket; after SIGKILL, the next command and the next start work', { timeout: 120_000 }, async () => {
    expect(await s.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(() => statSync(path.join(dataDir, 'lectern.sock'))).toThrow(/ENOENT/);

    const killed = await startServe(env);
    expect(await killed.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(statSync(path.join(dataDir, 'lectern.sock')).isSocket()).toBe(true); // left behind
    // No process holds the data dir: the command opens it itself.
    const alone = tokenOf(['token', 'create', 'carol'], await lectern(['token', 'create', 'carol']));
    const next = await startServe(env);
    try {
      expect(await viewer(next.url, alone)).toEqual({ data: { viewer: { username: 'carol', isAdmin: true } } });
      const through = tokenOf(['token', 'create', 'carol'], await lectern(['token', 'create', 'carol']));
      expect(await viewer(next.url, through)).toEqual({ data: { viewer: { username: 'carol', isAdmin: true } } });
    } finally {
      await next.stop('SIGTERM');
    }
  });

  it('where the data dir path is too long for a socket, serve starts without one and the command line says who holds the data dir', {
    timeout: 120_000,
  }, async () => {
    const long = path.join(dirs.make('lectern-control-long-'), 'd'.repeat(110));
    const longEnv = cliEnv({ LECTERN_DATA_DIR: long, LECTERN_BUILD_CONCURRENCY: '0' });
    const served = await startServe(longEnv);
    try {
      expect(served.stdout()).toContain('no control socket: the data dir path is too long for one');
      const r = await runCli(['token', 'create', 'carol'], longEnv);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`is in use by another Lectern process (pid ${served.child.pid})`);
    } finally {
      await served.stop('SIGTERM');
    }
  });
});
