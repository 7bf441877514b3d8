// Version syncs as jobs of the job queue (src/queue/jobs.ts, version-syncs.ts), on real repositories
// served by git daemon: a sync asked for waits in the database until a worker runs it, survives a
// restart, coalesces with requests made meanwhile, is taken back from a worker that died, and one
// that keeps failing is retried with growing, capped waits and then left failed with its error.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { createUser } from '../../src/domain/users.ts';
import { claimJob, completeJob } from '../../src/queue/jobs.ts';
import { SYNC_TASK, syncJobKey } from '../../src/queue/version-syncs.ts';
import { TEST_SECRET_KEY, type TestApp, testApp } from '../helpers/app.ts';
import { importProject } from '../helpers/builds.ts';
import { cliEnv, gql, killChildren, root, startServe } from '../helpers/cli-process.ts';
import { createPostgresDatabase, dbKind } from '../helpers/db.ts';
import { type GitServer, git, startGitServer, TEST_HOST } from '../helpers/git.ts';
import { recordingLog } from '../helpers/log.ts';
import { startSyncWorker, syncJobOf, syncSettled } from '../helpers/version-sync.ts';

let t: TestApp;
let server: GitServer;
let token: string;
const workers: Worker[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  t = await testApp();
  server = await startGitServer();
  token = await t.user('alice');
});
afterAll(async () => {
  for (const w of workers) await w.stop(1000);
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await killChildren();
  await server?.close();
  await t?.close();
});

async function worker(opts: Parameters<typeof startSyncWorker>[1] = {}): Promise<Worker> {
  const w = await startSyncWorker(t, opts);
  workers.push(w);
  return w;
}

const restSync = (slug: string) => t.http.post(`/api/v3/projects/${slug}/sync-versions/`).set('authorization', `Token ${token}`);
const gqlSync = (slug: string) =>
  t.gql(`mutation($p: String!) { syncVersions(project: $p) { ... on MutationSyncVersionsSuccess { data } ... on Error { message } } }`, { p: slug }, token);
/** Claims the sync due first as a worker named `workerId` would, and holds it. */
const claimSync = (workerId: string, leaseSeconds: number) => claimJob(t.db.prisma, workerId, leaseSeconds, { tasks: [SYNC_TASK], busy: [] });
const versionSlugs = async (projectId: number) => (await t.db.prisma.version.findMany({ where: { projectId }, orderBy: { slug: 'asc' } })).map((v) => v.slug);

/** A repository with a `feature` branch besides `main`. */
function repoWithFeature(name: string) {
  const repo = server.repo(name);
  git(repo.work, 'branch', 'feature');
  git(repo.work, 'push', '--quiet', 'origin', 'feature');
  return repo;
}

describe('a version sync asked for', () => {
  it('waits in the database while no worker runs; a worker started later runs it', async () => {
    const repo = repoWithFeature('queued-first');
    const p = await importProject(t, token, 'Queued First', repo.url);
    const res = await restSync(p.slug);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ triggered: true });
    // Nothing in this process runs it: the request only wrote the job. A fixed wait on purpose: it
    // proves something does NOT happen, which has no condition to wait on, only a time bound.
    await new Promise((r) => setTimeout(r, 500));
    expect(await syncJobOf(t, p.id)).toMatchObject({ state: 'queued', attempts: 0, workerId: null, lastError: null });
    expect(await versionSlugs(p.id)).toEqual(['latest']);

    const w = await worker();
    const job = await syncSettled(t, p.id);
    expect(job).toMatchObject({ state: 'done', attempts: 1, lastError: null, workerId: null, again: false });
    expect(await versionSlugs(p.id)).toEqual(['feature', 'latest', 'main']);
    await w.stop(1000);
  });

  it('coalesces with the requests made while it waits: one job, one run', async () => {
    const repo = repoWithFeature('coalesced');
    const p = await importProject(t, token, 'Coalesced', repo.url);
    expect((await restSync(p.slug)).status).toBe(202);
    expect((await restSync(p.slug)).status).toBe(202);
    const viaGraphql = await gqlSync(p.slug);
    expect(viaGraphql.data.syncVersions).toEqual({ data: true });
    expect(await t.db.prisma.job.count({ where: { task: SYNC_TASK, payload: { equals: { projectId: p.id } } } })).toBe(1);
    expect(await syncJobOf(t, p.id)).toMatchObject({ state: 'queued', attempts: 0 });

    const { log, lines } = recordingLog();
    const w = await worker({ log });
    expect(await syncSettled(t, p.id)).toMatchObject({ state: 'done', attempts: 1 });
    await w.stop(1000);
    expect(lines.filter((l) => l.msg === 'versions synced' && l.project === p.id)).toHaveLength(1);
  });

  it('asked for again while it runs, runs once more when it ends (it may have read the repository too early)', async () => {
    const repo = repoWithFeature('asked-again');
    const p = await importProject(t, token, 'Asked Again', repo.url);
    expect((await restSync(p.slug)).status).toBe(202);
    const claimed = await claimSync('busy-worker', 60);
    expect(claimed).toMatchObject({ task: SYNC_TASK, payload: { projectId: p.id }, attempts: 1 });
    // The branch appears after the running sync read the refs; its webhook asks again.
    git(repo.work, 'branch', 'late');
    git(repo.work, 'push', '--quiet', 'origin', 'late');
    expect((await restSync(p.slug)).status).toBe(202);
    expect(await syncJobOf(t, p.id)).toMatchObject({ state: 'running', again: true, workerId: 'busy-worker' });
    await completeJob(t.db.prisma, claimed!.id, 'busy-worker');
    expect(await syncJobOf(t, p.id)).toMatchObject({ state: 'queued', again: false, attempts: 0, workerId: null });

    const w = await worker();
    expect(await syncSettled(t, p.id)).toMatchObject({ state: 'done', attempts: 1 });
    expect(await versionSlugs(p.id)).toEqual(['feature', 'late', 'latest', 'main']);
    await w.stop(1000);
  });

  it('held by a worker that died is taken back when its lease runs out, and run by another', async () => {
    const repo = repoWithFeature('orphan-sync');
    const p = await importProject(t, token, 'Orphan Sync', repo.url);
    expect((await restSync(p.slug)).status).toBe(202);
    // A worker claims it and dies before doing anything: no heartbeat, no end.
    expect(await claimSync('dead-worker', 1)).toMatchObject({ payload: { projectId: p.id } });
    const w = await worker({ leaseSeconds: 2 });
    const job = await syncSettled(t, p.id);
    // The lost run counts: attempts are what keeps a sync that kills its worker from looping.
    expect(job).toMatchObject({ state: 'done', attempts: 2, lastError: null });
    expect(await versionSlugs(p.id)).toContain('feature');
    await w.stop(1000);
  });

  it('that keeps failing (repository unreachable) is retried with growing, capped waits, then left failed with its error', async () => {
    const repo = server.repo('unreachable-later');
    const p = await importProject(t, token, 'Unreachable', repo.url);
    // Port 1 of the test host: nothing listens, the connection is refused. The URL carries a credential.
    const unreachable = `http://lectern:s3cret-token@${TEST_HOST}:1/docs.git`;
    await t.db.prisma.project.update({ where: { id: p.id }, data: { repositoryUrl: unreachable } });
    const retry = { baseSeconds: 0.25, capSeconds: 1, maxAttempts: 5 };
    const { log, lines } = recordingLog();
    const w = await worker({ retry, log });
    expect((await gqlSync(p.slug)).data.syncVersions).toEqual({ data: true });

    // The wait chosen after each failed run, as the row says it: runAt - updatedAt (both the database's now()).
    const waits = new Map<number, number>();
    const until = Date.now() + 60_000;
    for (;;) {
      const job = (await syncJobOf(t, p.id))!;
      if (job.state === 'queued' && job.attempts > 0 && !waits.has(job.attempts))
        waits.set(job.attempts, (job.runAt.getTime() - job.updatedAt.getTime()) / 1000);
      if (job.state === 'failed') break;
      if (Date.now() > until) throw new Error(`still ${job.state} after a minute: ${JSON.stringify(job)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const failed = (await syncJobOf(t, p.id))!;
    expect(failed).toMatchObject({ state: 'failed', attempts: 5, workerId: null });
    expect(failed.lastError).toMatch(/git ls-remote .* failed/);
    expect(failed.lastError).not.toContain('s3cret-token');
    expect(JSON.stringify(lines)).not.toContain('s3cret-token');

    // Each wait is min(cap, base·2^(n-1)) times a jitter in [0.5, 1): 0.25 s, 0.5 s, then the 1 s
    // cap, at most; the waits grow (each range starts where the one before ends) up to the cap.
    expect([...waits.keys()]).toEqual([1, 2, 3, 4]);
    const ms = 0.002; // timestamps are kept to the millisecond
    for (const [n, wait] of waits) {
      const full = Math.min(retry.capSeconds, retry.baseSeconds * 2 ** (n - 1));
      expect(wait, `wait after run ${n}`).toBeGreaterThanOrEqual(full * 0.5 - ms);
      expect(wait, `wait after run ${n}`).toBeLessThanOrEqual(full + ms);
    }
    expect(waits.get(2)!).toBeGreaterThanOrEqual(waits.get(1)! - ms);
    expect(waits.get(3)!).toBeGreaterThanOrEqual(waits.get(2)! - ms);
    expect(lines.filter((l) => l.msg === 'version sync failed' && l.project === p.id).map((l) => l.state)).toEqual([
      'queued',
      'queued',
      'queued',
      'queued',
      'failed',
    ]);

    // It stops there: no sixth run. A fixed wait on purpose (longer than the 1 s cap, after which a
    // sixth run would be due): it proves something does NOT happen, so only a time bound fits.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await syncJobOf(t, p.id)).toMatchObject({ state: 'failed', attempts: 5 });

    // Asked for again, it starts over as a new request: due now, attempts and error reset.
    await w.stop(1000);
    expect((await restSync(p.slug)).status).toBe(202);
    expect(await syncJobOf(t, p.id)).toMatchObject({ state: 'queued', attempts: 0, lastError: null });
    await worker({ retry });
    expect(await syncSettled(t, p.id)).toMatchObject({ state: 'failed', attempts: 5 });
  }, 90_000);
});

/** `lectern <command>` as its own process on `env` (killed in afterAll if a test leaves it). */
function cliProcess(command: string, env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [path.join(root, 'src/bin.js'), command], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise((r) => child.once('exit', r));
  return {
    output: () => out,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

describe(`lectern processes on ${dbKind()}`, () => {
  it('`serve` without a worker (LECTERN_BUILD_CONCURRENCY=0) queues the sync; it survives the restart and `lectern worker` runs it', {
    timeout: 180_000,
  }, async () => {
    const repo = repoWithFeature('cli-restart');
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-sync-cli-'));
    const pg = dbKind() === 'postgres' ? await createPostgresDatabase() : null;
    /** The install's database, opened here while no Lectern process holds it. */
    const inDatabase = async <T>(fn: (db: Database) => Promise<T>): Promise<T> => {
      const db = await openDatabase({ dataDir, databaseUrl: pg?.url });
      try {
        return await fn(db);
      } finally {
        await db.close();
      }
    };
    const env = cliEnv({ LECTERN_DATA_DIR: dataDir, DATABASE_URL: pg?.url, LECTERN_SECRET_KEY: TEST_SECRET_KEY, LECTERN_BUILD_CONCURRENCY: '0' });
    try {
      // The install and its user made in this process (a `lectern user create` costs a process start).
      const carol = await inDatabase(async (db) => (await createUser(db.prisma, 'carol')).token);

      const served = await startServe(env);
      const imported = await gql(
        served.url,
        `mutation { importProject(input: {name: "CLI Restart", repository: {url: "${repo.url}"}}) { ... on MutationImportProjectSuccess { data { slug } } ... on Error { message } } }`,
        carol,
      );
      expect(imported.body.data?.importProject?.data?.slug, JSON.stringify(imported.body)).toBe('cli-restart');
      const res = await fetch(`${served.url}/api/v3/projects/cli-restart/sync-versions/`, { method: 'POST', headers: { authorization: `Token ${carol}` } });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ triggered: true });
      // A fixed wait on purpose: it gives the web process time to do sync work it must NOT do.
      await new Promise((r) => setTimeout(r, 500));
      expect((await served.stop()).code).toBe(0);
      // The web process did no sync work.
      expect(served.stdout()).not.toMatch(/versions synced|version sync/);

      // The job outlived the process. Its builds are left alone (the import's build would sync too).
      const projectId = await inDatabase(async (db) => {
        const p = await db.prisma.project.findUniqueOrThrow({ where: { slug: 'cli-restart' } });
        expect(await db.prisma.job.findUnique({ where: { key: syncJobKey(p.id) } })).toMatchObject({ state: 'queued', attempts: 0 });
        await db.prisma.build.updateMany({ where: { projectId: p.id }, data: { state: 'finished', success: false, error: 'not under test' } });
        return p.id;
      });

      const w = cliProcess('worker', { ...env, LECTERN_LOG_LEVEL: 'info' });
      const until = Date.now() + 60_000;
      while (!/"msg":"versions synced"/.test(w.output())) {
        if (Date.now() > until) throw new Error(`lectern worker did not sync:\n${w.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      await w.stop();
      await inDatabase(async (db) => {
        expect(await db.prisma.job.findUnique({ where: { key: syncJobKey(projectId) } })).toMatchObject({ state: 'done', attempts: 1, lastError: null });
        const slugs = (await db.prisma.version.findMany({ where: { projectId }, orderBy: { slug: 'asc' } })).map((v) => v.slug);
        expect(slugs).toEqual(['feature', 'latest', 'main']);
      });
    } finally {
      await killChildren();
      await pg?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
