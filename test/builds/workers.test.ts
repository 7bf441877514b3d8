// Workers that die and workers that share the queue. On both databases: a build whose worker
// vanished (its lease ran out) is retried by another worker, or failed once it used its attempts.
// On PostgreSQL, with real `lectern worker` processes: one killed with SIGKILL mid-build, and two
// sharing 20 builds, each built exactly once.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_ATTEMPTS } from '../../src/queue/builds.ts';
import { TEST_SECRET_KEY, type TestApp, testApp } from '../helpers/app.ts';
import { buildJobOf, claimBuildAs, importProject, latestBuildOf, sphinxFiles, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { cliEnv, killChildren, root } from '../helpers/cli-process.ts';
import { dbKind } from '../helpers/db.ts';
import { type GitServer, git, startGitServer } from '../helpers/git.ts';
import { recordingLog } from '../helpers/log.ts';
import { until } from '../helpers/wait.ts';

let t: TestApp;
let server: GitServer;
let token: string;

beforeAll(async () => {
  t = await testApp();
  server = await startGitServer();
  token = await t.user('ops');
});
afterAll(async () => {
  await killChildren();
  await server?.close();
  await t?.close();
});

const commandsProject = (marker: string) => ({
  '.readthedocs.yaml': [
    'version: 2',
    'build:',
    '  commands:',
    '    - mkdir -p $READTHEDOCS_OUTPUT/html',
    `    - echo "<p>${marker}</p>" > $READTHEDOCS_OUTPUT/html/index.html`,
    '',
  ].join('\n'),
});

describe('a build whose worker vanished', () => {
  it('is taken back when its lease runs out and built by another worker', async () => {
    const repo = server.repo('orphan', commandsProject('orphan'));
    const p = await importProject(t, token, 'Orphan', repo.url);
    const id = await latestBuildOf(t, p.slug);
    // A worker claims it and dies before doing anything (no heartbeat ever comes).
    const claimed = await claimBuildAs(t, 'dead-worker', 2);
    expect(claimed?.id).toBe(id);
    const { log, lines } = recordingLog();
    const worker = await startTestWorker(t, { leaseSeconds: 3, log });
    try {
      const build = await waitForBuild(t, id, 60_000);
      expect(build.success, build.error ?? '').toBe(true);
      expect(build.workerId).toBe(worker.id);
      // Its second run; its job is removed once the build ended.
      expect(lines.filter((l) => l.msg === 'build started' && l.build === id).map((l) => l.attempt)).toEqual([2]);
      await until('its job to end', async () => (await buildJobOf(t, id)) === null);
      // Its record is the attempt that ran, once.
      expect(build.commands.filter((c) => c.command.startsWith('git clone'))).toHaveLength(1);
    } finally {
      await worker.stop(1000);
    }
  }, 90_000); // the wait for the build is 60 s: a sandboxed build on a busy machine takes over the default 30

  it('is finished as failed, saying why, once it used its attempts', async () => {
    const repo = server.repo('orphan-twice', commandsProject('orphan-twice'));
    const p = await importProject(t, token, 'Orphan Twice', repo.url);
    const id = await latestBuildOf(t, p.slug);
    await t.db.prisma.webhook.create({ data: { projectId: p.id, url: 'https://example.com/hook', events: ['build:failed'], secretEncrypted: 'not used' } });
    await t.db.prisma.job.update({ where: { id: (await buildJobOf(t, id))!.id }, data: { attempts: BUILD_ATTEMPTS - 1 } });
    expect((await claimBuildAs(t, 'dead-worker', 2))?.id).toBe(id);
    const worker = await startTestWorker(t, { leaseSeconds: 3 });
    try {
      const build = await waitForBuild(t, id, 60_000);
      expect(build.success).toBe(false);
      expect(build.error).toMatch(/worker running this build stopped/);
      expect(build.finishedAt).not.toBeNull();
      // Its build:failed was queued with its end: there as soon as the build reads finished.
      expect(await t.db.prisma.notificationDelivery.findMany({ where: { buildId: id }, select: { event: true } })).toEqual([{ event: 'build:failed' }]);
      expect(await buildJobOf(t, id)).toMatchObject({ state: 'failed', attempts: BUILD_ATTEMPTS });
    } finally {
      await worker.stop(1000);
    }
  }, 90_000);
});

describe('the per-project limit', () => {
  it('a project limited to one build at a time never has two running, whatever the worker could take', async () => {
    const repo = server.repo('limited', sphinxFiles({ 'docs/conf.py': "import time\ntime.sleep(1)\nproject = 'Limited'\nhtml_theme = 'alabaster'\n" }));
    git(repo.work, 'branch', 'one');
    git(repo.work, 'branch', 'two');
    git(repo.work, 'push', '--quiet', 'origin', '--all');
    const p = await importProject(t, token, 'Limited', repo.url);
    await t.db.prisma.project.update({ where: { id: p.id }, data: { maxConcurrentBuilds: 1 } });
    const { syncProjectVersions } = await import('../../src/domain/version-sync.ts');
    await syncProjectVersions(t.services, p.id, repo.url);
    const ids = [await latestBuildOf(t, p.slug)];
    for (const slug of ['one', 'two']) {
      await t.db.prisma.version.updateMany({ where: { projectId: p.id, slug }, data: { active: true } });
      const res = await t.http.post(`/api/v3/projects/${p.slug}/versions/${slug}/builds/`).set('authorization', `Token ${token}`);
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      ids.push(res.body.build.id);
    }
    const worker = await startTestWorker(t, { concurrency: 3 });
    let most = 0;
    try {
      await until(
        'the three builds to finish',
        async () => {
          const running = await t.db.prisma.build.count({ where: { id: { in: ids }, state: { in: ['cloning', 'installing', 'building'] } } });
          most = Math.max(most, running);
          return (await t.db.prisma.build.count({ where: { id: { in: ids }, state: 'finished' } })) === 3;
        },
        90_000,
      );
    } finally {
      await worker.stop(1000);
    }
    expect(most).toBe(1);
    const builds = await t.db.prisma.build.findMany({ where: { id: { in: ids } } });
    expect(builds.every((b) => b.success)).toBe(true);
  }, 120_000);
});

describe('a worker asked to stop', () => {
  it('gives a build still running after its grace period back to the queue, clean', async () => {
    const repo = server.repo('slow-stop', sphinxFiles({ 'docs/conf.py': "import time\ntime.sleep(60)\nproject = 'Slow'\n" }));
    const p = await importProject(t, token, 'Slow Stop', repo.url);
    const id = await latestBuildOf(t, p.slug);
    const worker = await startTestWorker(t);
    await until('the build to reach the building step', async () => (await t.db.prisma.build.findUniqueOrThrow({ where: { id } })).state === 'building');
    // stop() returns once the build is handed back (vitest's timeout fails a stop that hangs).
    await worker.stop(500);
    const build = await t.db.prisma.build.findUniqueOrThrow({ where: { id }, include: { commands: true } });
    expect(build).toMatchObject({ state: 'triggered', workerId: null });
    expect(build.commands).toEqual([]);
    // Waiting again, its run not counted.
    expect(await buildJobOf(t, id)).toMatchObject({ state: 'queued', attempts: 0, workerId: null });
    // Not left for later tests to pick up.
    await t.db.prisma.build.update({ where: { id }, data: { state: 'finished', success: false, error: 'test over' } });
  });
});

/** `lectern worker` as its own process on the test's PostgreSQL database and storage. */
function startWorkerProcess(lease: number, concurrency = 1): ChildProcess & { output: () => string } {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-worker-'));
  const child = spawn(process.execPath, [path.join(root, 'src/bin.js'), 'worker'], {
    cwd: root,
    env: cliEnv({
      DATABASE_URL: t.databaseUrl,
      LECTERN_DATA_DIR: dataDir,
      LECTERN_STORAGE: t.config.storage,
      LECTERN_SECRET_KEY: TEST_SECRET_KEY,
      LECTERN_PUBLIC_URL: t.config.publicUrl,
      LECTERN_BUILD_LEASE_SECONDS: String(lease),
      LECTERN_BUILD_CONCURRENCY: String(concurrency),
      LECTERN_LOG_LEVEL: 'info',
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  child.once('exit', () => rmSync(dataDir, { recursive: true, force: true }));
  return Object.assign(child, { output: () => out });
}

if (dbKind() === 'postgres') {
  describe('lectern worker processes on one PostgreSQL', () => {
    it('a worker killed with SIGKILL mid-build: the build is retried by another within its lease, never left running', async () => {
      const repo = server.repo('killed', sphinxFiles({ 'docs/conf.py': "import time\ntime.sleep(5)\nproject = 'Killed'\nhtml_theme = 'alabaster'\n" }));
      const p = await importProject(t, token, 'Killed', repo.url);
      const id = await latestBuildOf(t, p.slug);
      const proc = startWorkerProcess(4);
      await until('the worker process to reach the building step', async () => {
        const b = await t.db.prisma.build.findUniqueOrThrow({ where: { id } });
        return b.state === 'building';
      });
      const held = await t.db.prisma.build.findUniqueOrThrow({ where: { id } });
      const victim = held.workerId;
      const lease = (await buildJobOf(t, id))!.leaseExpiresAt!;
      proc.kill('SIGKILL');
      await new Promise((r) => proc.once('exit', r));
      const rescuer = await startTestWorker(t, { leaseSeconds: 4 });
      try {
        // Requeued (no worker) and claimed are two steps; wait for the claim.
        await until('the build to be taken back by another worker', async () => {
          const b = await t.db.prisma.build.findUniqueOrThrow({ where: { id } });
          return b.workerId !== null && b.workerId !== victim;
        });
        // Taken back once the dead worker's lease had run out, not while it still held it.
        const retaken = await t.db.prisma.build.findUniqueOrThrow({ where: { id } });
        expect(retaken.startedAt!.getTime()).toBeGreaterThanOrEqual(lease.getTime());
        expect((await buildJobOf(t, id))?.attempts).toBe(2);
        const build = await waitForBuild(t, id, 60_000);
        expect(build.success, build.error ?? '').toBe(true);
        expect(build.workerId).toBe(rescuer.id);
      } finally {
        await rescuer.stop(1000);
      }
    }, 120_000);

    it('SIGTERM lets the running build finish, then the process exits 0', async () => {
      const repo = server.repo('sigterm', sphinxFiles({ 'docs/conf.py': "import time\ntime.sleep(3)\nproject = 'Term'\nhtml_theme = 'alabaster'\n" }));
      const p = await importProject(t, token, 'Sigterm', repo.url);
      const id = await latestBuildOf(t, p.slug);
      const proc = startWorkerProcess(30);
      await until('the build to reach the building step', async () => (await t.db.prisma.build.findUniqueOrThrow({ where: { id } })).state === 'building');
      const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
      proc.kill('SIGTERM');
      expect(await exited, proc.output()).toBe(0);
      const build = await t.db.prisma.build.findUniqueOrThrow({ where: { id } });
      expect(build.state).toBe('finished');
      expect(build.success, build.error ?? '').toBe(true);
    }, 120_000);

    it('two workers given 20 builds build each exactly once', async () => {
      const ids: number[] = [];
      for (let i = 0; i < 20; i++) {
        const repo = server.repo(`many-${i}`, commandsProject(`many-${i}`));
        const p = await importProject(t, token, `Many ${i}`, repo.url);
        ids.push(await latestBuildOf(t, p.slug));
      }
      const a = startWorkerProcess(30, 2);
      const b = startWorkerProcess(30, 2);
      try {
        await until('all 20 builds to finish', async () => (await t.db.prisma.build.count({ where: { id: { in: ids }, state: 'finished' } })) === 20, 180_000);
        const builds = await t.db.prisma.build.findMany({ where: { id: { in: ids } }, include: { commands: true } });
        for (const build of builds) {
          expect(build.success, `${build.id}: ${build.error}`).toBe(true);
          expect(
            build.commands.filter((c) => c.command.startsWith('git clone')),
            `build ${build.id}`,
          ).toHaveLength(1);
        }
        const byWorker = new Map<string, number>();
        for (const build of builds) byWorker.set(build.workerId!, (byWorker.get(build.workerId!) ?? 0) + 1);
        expect(byWorker.size, `builds per worker: ${JSON.stringify([...byWorker])}\n${a.output()}\n${b.output()}`).toBe(2);
      } finally {
        a.kill('SIGTERM');
        b.kill('SIGTERM');
        await Promise.all([a, b].map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r)))));
      }
    }, 300_000);
  });
}
