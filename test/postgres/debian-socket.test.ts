// Lectern on PostgreSQL as Debian's initdb leaves a cluster: no TCP at all, its unix socket in
// /var/run/postgresql, and "local all all trust" (anyone on the machine connects as anyone, with
// no password). An operator writes the socket into DATABASE_URL the two ways libpq and pg take it
// (`?host=/var/run/postgresql`, and the directory percent-encoded as the host); with each, the real
// command line migrates, `lectern serve` starts beside a repository on the same machine, a token
// made on the command line imports it, its build passes and its docs are served on their own
// origin. That the builds themselves never reach this socket is test/security/sandbox-isolation.test.ts's.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/cli-databases.ts';
import { cliEnv, killChildren, runCli, type Served, show, startServe } from '../helpers/cli-process.ts';
import { DEBIAN_SOCKET_DIR, type DebianCluster, startDebianCluster } from '../helpers/debian-postgres.ts';
import { until } from '../helpers/wait.ts';

const SOCKET_DIR = DEBIAN_SOCKET_DIR;
const dirs = tempDirs();
let pg: DebianCluster | undefined;
let port: number;

beforeAll(async () => {
  pg = await startDebianCluster();
  port = pg.port;
  expect(pg.psql("SELECT string_agg(type || ' ' || auth_method, ', ') FROM pg_hba_file_rules WHERE 'all' = ANY(database)")).toContain('local trust');
  pg.psql('CREATE DATABASE lectern_query');
  pg.psql('CREATE DATABASE lectern_encoded');
}, 60_000);

afterAll(async () => {
  await killChildren();
  pg?.stop();
  dirs.cleanup();
});

/** A repository on this machine, as the README makes one. */
function helloRepository(home: string): string {
  const hello = path.join(home, 'docs-repos/hello');
  mkdirSync(path.join(hello, 'docs'), { recursive: true });
  writeFileSync(path.join(hello, 'mkdocs.yml'), 'site_name: Hello\n');
  writeFileSync(path.join(hello, 'docs/index.md'), '# Hello\n\nBuilt beside a socket-only PostgreSQL.\n');
  const git = (...args: string[]) => execFileSync('git', ['-C', hello, ...args], { stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('-c', 'user.name=me', '-c', 'user.email=me@example.com', 'commit', '-qm', 'First docs');
  return hello;
}

/** GET on the server at 127.0.0.1, as `host` (a docs origin such as hello.localhost:<port>). */
function getAs(served: Served, host: string, pathname: string): Promise<{ status: number; body: string }> {
  const { port: p } = new URL(served.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: Number(p), path: pathname, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const URLS = {
  query: () => `postgresql://postgres@/lectern_query?host=${SOCKET_DIR}&port=${port}`,
  encoded: () => `postgresql://postgres@${encodeURIComponent(SOCKET_DIR)}:${port}/lectern_encoded`,
};

describe("Lectern on PostgreSQL as Debian's initdb sets it up (unix socket only, trust)", () => {
  for (const [form, url] of Object.entries(URLS)) {
    it(`with the socket as ${form === 'query' ? '?host=/var/run/postgresql' : 'the percent-encoded host'}: migrate, serve, a token, a local repository built and served`, {
      timeout: 240_000,
    }, async () => {
      const home = dirs.make('lectern-debian-pg-');
      const repo = helloRepository(home);
      const env = cliEnv({
        LECTERN_DATA_DIR: path.join(home, 'data'),
        DATABASE_URL: url(),
        LECTERN_BUILD_LOCAL_REPOSITORIES: path.dirname(repo),
        LECTERN_BUILD_NETWORK_ALLOW: undefined,
      });
      const migrate = await runCli(['migrate'], env);
      expect(migrate.code, show(['migrate'], migrate)).toBe(0);
      expect(migrate.stdout).toMatch(/applied \d+ migration/);

      const served = await startServe(env, 120_000);
      try {
        const args = ['user', 'create', 'ada', '--admin', '--email', 'ada@example.com'];
        const user = await runCli(args, env);
        expect(user.code, show(args, user)).toBe(0);
        const tokenArgs = ['token', 'create', 'ada'];
        const made = await runCli(tokenArgs, env);
        expect(made.code, show(tokenArgs, made)).toBe(0);
        const token = made.stdout.trimEnd().split('\n').at(-1)!;
        const api = (p: string, init: RequestInit = {}) =>
          fetch(`${served.url}/api/v3${p}`, { ...init, headers: { authorization: `Token ${token}`, 'content-type': 'application/json' } });

        const imported = await api('/projects/', { method: 'POST', body: JSON.stringify({ name: 'Hello', repository: { url: repo, type: 'git' } }) });
        expect(imported.status, await imported.clone().text()).toBe(201);
        const build = await until(
          'the first build to finish',
          async () => {
            const res = await api('/projects/hello/builds/');
            const b = ((await res.json()) as { results: { state: { code: string }; success: boolean | null; error: string }[] }).results[0];
            return b?.state.code === 'finished' ? b : null;
          },
          180_000,
        );
        expect(build, JSON.stringify(build)).toMatchObject({ success: true });

        const docs = await getAs(served, `hello.localhost:${new URL(served.url).port}`, '/en/latest/');
        expect(docs.status).toBe(200);
        expect(docs.body).toContain('Built beside a socket-only PostgreSQL.');
        // Nothing of the URL's password-free socket address is a secret, but the server logged no error.
        expect(served.stdout()).not.toMatch(/"level":(50|60)/);
      } finally {
        await served.stop('SIGTERM');
      }
    });
  }
});
