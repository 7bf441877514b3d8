// A hostile conf.py against the build sandbox (bubblewrap): it tries to read Lectern's data dir,
// the Lectern process and another project's variables, to write outside its checkout, to reach
// the network, and to run forever. The build reports what it could do; the test checks it could not.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { bwrapAvailable } from '../../src/sandbox/sandbox.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, sphinxFiles, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { type GitServer, git, startGitServer } from '../helpers/git.ts';

let t: TestApp;
let server: GitServer;
let token: string;
let worker: Worker;
let outside: string;
let listener: Server;
let storageDir: string;
let homeSecret: string;
let listenerPort: number;

beforeAll(async () => {
  if (!bwrapAvailable()) throw new Error('bubblewrap (bwrap) is missing or cannot run here: apt-get install -y bubblewrap');
  // File storage outside the data dir and outside /tmp, as an operator may configure it.
  storageDir = mkdtempSync(path.join('/var/tmp', 'lectern-storage-'));
  t = await testApp({ LECTERN_STORAGE: `file:${storageDir}` });
  // Credentials in the home of the user Lectern runs as (cloud keys, .pgpass…).
  homeSecret = path.join(os.homedir(), `.lectern-test-credentials-${process.pid}`);
  writeFileSync(homeSecret, 'aws_secret_access_key = not-for-builds');
  server = await startGitServer();
  token = await t.user('mallory');
  worker = await startTestWorker(t);
  outside = mkdtempSync(path.join(os.tmpdir(), 'lectern-outside-'));
  writeFileSync(path.join(outside, 'private.txt'), 'not for builds');
  // A service on the machine the build must not reach.
  listener = createServer((s) => s.end('hello'));
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  listenerPort = (listener.address() as { port: number }).port;
});
afterAll(async () => {
  await worker?.stop(1000);
  listener?.close();
  await server?.close();
  await t?.close();
  rmSync(outside, { recursive: true, force: true });
  rmSync(storageDir, { recursive: true, force: true });
  rmSync(homeSecret, { force: true });
});

const hostileConf = (o: { dataDir: string; outside: string; port: number; pid: number; storageDir: string; homeSecret: string }) => `
import json, os, socket
report = {}
def attempt(name, fn):
    try:
        report[name] = ['ok', repr(fn())[:200]]
    except Exception as e:
        report[name] = ['denied', type(e).__name__]
attempt('list_data_dir', lambda: os.listdir(${JSON.stringify(o.dataDir)}))
attempt('list_builds', lambda: len(os.listdir(${JSON.stringify(path.join(o.dataDir, 'builds'))})))
attempt('database_files', lambda: os.path.exists(${JSON.stringify(path.join(o.dataDir, 'db'))}) or os.path.exists(${JSON.stringify(path.join(o.dataDir, 'storage'))}))
attempt('list_storage', lambda: os.listdir(${JSON.stringify(o.storageDir)}))
attempt('read_home_credentials', lambda: open(${JSON.stringify(o.homeSecret)}).read())
attempt('read_outside', lambda: open(${JSON.stringify(path.join(o.outside, 'private.txt'))}).read())
attempt('write_outside', lambda: open(${JSON.stringify(path.join(o.outside, 'pwned.txt'))}, 'w').write('x'))
attempt('write_home_of_root', lambda: open('/root/lectern-pwned.txt', 'w').write('x'))
attempt('lectern_process', lambda: open('/proc/${o.pid}/environ', 'rb').read())
attempt('connect_local', lambda: socket.create_connection(('127.0.0.1', ${o.port}), timeout=3).recv(5))
attempt('env_names', lambda: sorted(k for k in os.environ if 'SECRET' in k or 'TOKEN' in k or k.startswith('LECTERN') or k == 'DATABASE_URL'))
print('SANDBOX-REPORT ' + json.dumps(report))
project = 'Hostile'
html_theme = 'alabaster'
`;

describe('a hostile conf.py', () => {
  it("cannot read the data dir, the Lectern process or files outside, write outside, reach the network, or see other projects' variables", async () => {
    // Another project with a secret the hostile build must never see.
    const victim = server.repo('victim', { 'README.md': 'x' });
    const v = await importProject(t, token, 'Victim', victim.url);
    const set = await t.gql(
      `mutation { createEnvironmentVariable(project: "${v.slug}", input: {name: "VICTIM_SECRET", value: "victim-value-123"}) { __typename } }`,
      {},
      token,
    );
    expect(set.data.createEnvironmentVariable.__typename).toMatch(/Success/);

    const repo = server.repo(
      'hostile',
      sphinxFiles({ 'docs/conf.py': hostileConf({ dataDir: t.dataDir, outside, port: listenerPort, pid: process.pid, storageDir, homeSecret }) }),
    );
    const p = await importProject(t, token, 'Hostile', repo.url);
    await t.gql(`mutation { createEnvironmentVariable(project: "${p.slug}", input: {name: "OWN_TOKEN", value: "own-value-456"}) { __typename } }`, {}, token);
    // The import's build may have started before the variable existed; the next one has it.
    await waitForBuild(t, await latestBuildOf(t, p.slug));
    const res = await t.http.post(`/api/v3/projects/${p.slug}/versions/latest/builds/`).set('authorization', `Token ${token}`);
    const build = await waitForBuild(t, res.body.build.id);
    expect(build.success, build.error ?? '').toBe(true);
    const sphinx = build.commands.find((c) => c.output.includes('SANDBOX-REPORT'));
    expect(sphinx, build.commands.map((c) => `${c.command}\n${c.output}`).join('\n')).toBeDefined();
    const report = JSON.parse(/SANDBOX-REPORT (.*)/.exec(sphinx!.output)![1]!) as Record<string, [string, string]>;

    // Of the data dir only this build's own directory is there: no database, no storage, no other builds.
    expect(report.list_data_dir).toEqual(['ok', "['builds']"]);
    expect(report.list_builds).toEqual(['ok', '1']);
    expect(report.database_files).toEqual(['ok', 'False']);
    expect(report.read_outside![0]).toBe('denied');
    // The storage (other projects' built docs) and the home's files are not there at all (the root is made of system directories only).
    expect(report.list_storage).toEqual(['denied', 'FileNotFoundError']);
    expect(report.read_home_credentials![0]).toBe('denied');
    expect((await t.storage.list('projects/')).length).toBeGreaterThan(0);
    expect(report.write_outside![0]).toBe('denied');
    // The home directory is an empty throwaway there: a write may succeed, and lands nowhere.
    expect(report.write_home_of_root![0]).toMatch(/^(ok|denied)$/);
    expect(report.lectern_process![0]).toBe('denied');
    expect(report.connect_local![0]).toBe('denied');
    // Its own variable (masked in the output), nothing of Lectern's or the other project's.
    expect(report.env_names).toEqual(['ok', "['OWN_TOKEN']"]);
    expect(existsSync(path.join(outside, 'pwned.txt'))).toBe(false);
    expect(existsSync('/root/lectern-pwned.txt')).toBe(false);
    expect(JSON.stringify(build)).not.toContain('victim-value-123');
  });

  it("is killed at the project's time limit and the build says so", async () => {
    const repo = server.repo('sleepy', sphinxFiles());
    const p = await importProject(t, token, 'Sleepy', repo.url);
    await waitForBuild(t, await latestBuildOf(t, p.slug));
    await t.db.prisma.project.update({ where: { id: p.id }, data: { buildTimeLimit: 8 } });
    repo.commit({ 'docs/conf.py': "import time\ntime.sleep(600)\nproject = 'Sleepy'\n" });
    git(repo.work, 'push', '--quiet', 'origin', 'main');
    const res = await t.http.post(`/api/v3/projects/${p.slug}/versions/latest/builds/`).set('authorization', `Token ${token}`);
    const build = await waitForBuild(t, res.body.build.id, 60_000);
    expect(build.success).toBe(false);
    expect(build.error).toMatch(/time limit/);
    // Killed at its limit: the build lasted its 8 seconds and a little, never the 600 its conf.py sleeps.
    expect(build.duration).toBeGreaterThanOrEqual(8);
    expect(build.duration).toBeLessThan(600);
  });
});
