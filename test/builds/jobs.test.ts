// The one job queue (src/queue/jobs.ts, docs/design/jobs.md) on the project's database: what a
// worker sees when it claims, ends, fails and loses jobs, whatever their task, and the migration
// that moved the version syncs' table, the deliveries' queue columns and the builds into it.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '../../src/builds/worker.ts';
import { migrate, readMigrations } from '../../src/db/migrate.ts';
import { DELIVER_TASK, queueBuildEvent } from '../../src/queue/deliveries.ts';
import {
  addJobs,
  addKeyedJob,
  claimJob,
  completeJob,
  failJob,
  HOUSEKEEPING_TASK,
  LOST_ERROR,
  nextJobDueMs,
  pruneEndedJobs,
  reapExpiredJobs,
  releaseJob,
} from '../../src/queue/jobs.ts';
import { queueVersionSync } from '../../src/queue/version-syncs.ts';
import { Cipher } from '../../src/secrets.ts';
import { TEST_SECRET_KEY, type TestApp, testApp } from '../helpers/app.ts';
import { pipelineDeps } from '../helpers/builds.ts';
import { emptyEmbeddedSession, emptyPostgresDatabase, pgSession } from '../helpers/cli-databases.ts';
import { dbKind } from '../helpers/db.ts';
import { recordingLog } from '../helpers/log.ts';
import { startSyncWorker, syncSettled } from '../helpers/version-sync.ts';
import { until } from '../helpers/wait.ts';

let t: TestApp;

beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});
// A test's jobs go with it: a worker started by a later test would take back the ones left running.
afterEach(async () => {
  await t.db.prisma.job.deleteMany({ where: { task: { startsWith: 'test-task-' } } });
});

// Each test's tasks are its own (the table is shared by the file's tests).
let n = 0;
const taskName = () => `test-task-${++n}`;
const all = (task: string) => t.db.prisma.job.findMany({ where: { task }, orderBy: { id: 'asc' } });
const claim = (worker: string, tasks: string[], busy: string[] = [], lease = 60) => claimJob(t.db.prisma, worker, lease, { tasks, busy });

describe('the job queue', () => {
  it('runs each job once: a claimed job is no other worker’s, and one without a key is gone when it succeeds', async () => {
    const task = taskName();
    await addJobs(t.db.prisma, [
      { task, payload: { n: 1 } },
      { task, payload: { n: 2 } },
    ]);
    const a = await claim('a', [task]);
    const b = await claim('b', [task]);
    expect([a?.payload, b?.payload]).toEqual([{ n: 1 }, { n: 2 }]);
    expect(await claim('c', [task])).toBeNull();
    // Only its worker ends it.
    await completeJob(t.db.prisma, a!.id, 'b');
    expect(await all(task)).toHaveLength(2);
    await completeJob(t.db.prisma, a!.id, 'a');
    await completeJob(t.db.prisma, b!.id, 'b');
    expect(await all(task)).toEqual([]);
  });

  it('coalesces requests by key: one waiting job, run again when asked while it ran, kept done as the record', async () => {
    const task = taskName();
    const key = `${task}:1`;
    await addKeyedJob(t.db.prisma, key, { task, payload: { p: 1 } });
    await addKeyedJob(t.db.prisma, key, { task, payload: { p: 1 } });
    expect(await all(task)).toEqual([expect.objectContaining({ state: 'queued', attempts: 0 })]);
    const run = (await claim('w', [task]))!;
    await addKeyedJob(t.db.prisma, key, { task, payload: { p: 1 } });
    expect(await all(task)).toEqual([expect.objectContaining({ state: 'running', again: true })]);
    await completeJob(t.db.prisma, run.id, 'w');
    expect(await all(task)).toEqual([expect.objectContaining({ state: 'queued', again: false, attempts: 0 })]);
    const second = (await claim('w', [task]))!;
    expect(second.id).toBe(run.id);
    await completeJob(t.db.prisma, second.id, 'w');
    expect(await all(task)).toEqual([expect.objectContaining({ state: 'done', attempts: 1, workerId: null })]);
    // Asked for again once done: the same row, waiting afresh.
    await addKeyedJob(t.db.prisma, key, { task, payload: { p: 1 } });
    expect(await all(task)).toEqual([expect.objectContaining({ id: run.id, state: 'queued', attempts: 0 })]);
  });

  it('waits out a failed run, then leaves the job failed with its error when its attempts are used', async () => {
    const task = taskName();
    await addJobs(t.db.prisma, [{ task, payload: {} }]);
    const first = (await claim('w', [task]))!;
    expect(await failJob(t.db.prisma, first.id, 'w', 'it broke', 3600, 2)).toMatchObject({ state: 'queued', attempts: 1 });
    // Not due for an hour: nobody claims it.
    expect(await claim('w', [task])).toBeNull();
    await t.db.prisma.job.update({ where: { id: first.id }, data: { runAt: new Date(Date.now() - 1000) } });
    const second = (await claim('w', [task]))!;
    expect(second.attempts).toBe(2);
    expect(await failJob(t.db.prisma, second.id, 'w', 'broke again', 1, 2)).toMatchObject({ state: 'failed', attempts: 2 });
    expect(await all(task)).toEqual([expect.objectContaining({ state: 'failed', lastError: 'broke again' })]);
    expect(await claim('w', [task])).toBeNull();
  });

  it("skips the groups a worker names as having had their turn, and other tasks' jobs", async () => {
    const task = taskName();
    const other = taskName();
    await addJobs(t.db.prisma, [
      { task, payload: { n: 1 }, groupKey: 'project:1' },
      { task, payload: { n: 2 }, groupKey: 'project:1' },
      { task: other, payload: { n: 3 }, groupKey: 'project:1' },
      { task, payload: { n: 4 }, groupKey: 'project:2' },
    ]);
    const turn = await claim('w', [task], [`${task}|project:1`]);
    expect(turn?.payload).toEqual({ n: 4 });
    // Another task's busy group does not hold this task's jobs back.
    expect((await claim('w', [task], [`${other}|project:1`]))?.payload).toEqual({ n: 1 });
  });

  it("runs no more of a group's jobs at once than its limit, across workers, and the next when one ends", async () => {
    const task = taskName();
    await addJobs(t.db.prisma, [
      { task, payload: { n: 1 }, groupKey: 'project:1', groupLimit: 2 },
      { task, payload: { n: 2 }, groupKey: 'project:1', groupLimit: 2 },
      { task, payload: { n: 3 }, groupKey: 'project:1', groupLimit: 2 },
      { task, payload: { n: 4 }, groupKey: 'project:2', groupLimit: 1 },
    ]);
    const first = (await claim('a', [task]))!;
    expect((await claim('b', [task]))?.payload).toEqual({ n: 2 });
    // project:1 runs two: another worker passes its third by for project:2's.
    expect((await claim('c', [task]))?.payload).toEqual({ n: 4 });
    expect(await claim('c', [task])).toBeNull();
    // Nothing it may take is due, so nothing wakes it early.
    expect(await nextJobDueMs(t.db.prisma, { tasks: [task], busy: [] })).toBeNull();
    await completeJob(t.db.prisma, first.id, 'a');
    expect((await claim('c', [task]))?.payload).toEqual({ n: 3 });
  });

  it('takes back a job whose worker died, counting the lost run, and fails it when that was its last', async () => {
    const task = taskName();
    await addJobs(t.db.prisma, [{ task, payload: {} }]);
    const lost = (await claim('dead', [task], [], 0.001))!;
    await new Promise((r) => setTimeout(r, 20));
    const reaped = await reapExpiredJobs(t.db.prisma, { [task]: 2 });
    expect(reaped.filter((j) => j.task === task)).toEqual([expect.objectContaining({ id: lost.id, state: 'queued', attempts: 1 })]);
    const again = (await claim('w', [task], [], 0.001))!;
    await new Promise((r) => setTimeout(r, 20));
    expect((await reapExpiredJobs(t.db.prisma, { [task]: 2 })).filter((j) => j.task === task)).toEqual([
      expect.objectContaining({ id: again.id, state: 'failed', attempts: 2 }),
    ]);
    expect(await all(task)).toEqual([expect.objectContaining({ state: 'failed', lastError: LOST_ERROR })]);
  });

  it('gives a job back on shutdown without counting the run, and prunes ended jobs after their keeping', async () => {
    const task = taskName();
    await addJobs(t.db.prisma, [{ task, payload: {} }]);
    const run = (await claim('w', [task]))!;
    await releaseJob(t.db.prisma, run.id, 'w');
    expect(await all(task)).toEqual([expect.objectContaining({ state: 'queued', attempts: 0, workerId: null })]);
    await t.db.prisma.job.update({ where: { id: run.id }, data: { state: 'failed', updatedAt: new Date(Date.now() - 31 * 86_400_000) } });
    await addKeyedJob(t.db.prisma, `${task}:recent`, { task, payload: {} });
    await t.db.prisma.job.updateMany({ where: { key: `${task}:recent` }, data: { state: 'done' } });
    await pruneEndedJobs(t.db.prisma);
    expect((await all(task)).map((j) => j.key)).toEqual([`${task}:recent`]);
  });
});

describe('a job whose subject is gone', () => {
  it("ends quietly: a deleted project's sync is done, with nothing synced and nothing failed", async () => {
    const token = await t.user('gone-owner');
    const made = await t.gql(
      `mutation { importProject(input: {name: "Gone", repository: {url: "https://example.com/gone.git"}}) { ... on MutationImportProjectSuccess { data { id } } } }`,
      {},
      token,
    );
    const projectId = made.data.importProject.data.id as number;
    await queueVersionSync(t.db.prisma, t.services.events, projectId);
    await t.db.prisma.project.delete({ where: { id: projectId } });
    const { log, lines } = recordingLog();
    const worker = await startSyncWorker(t, { log });
    try {
      expect(await syncSettled(t, projectId)).toMatchObject({ state: 'done', lastError: null });
    } finally {
      await worker.stop(1000);
    }
    expect(lines.filter((l) => (l.level as number) >= 40)).toEqual([]);
  });
});

describe('a delivery whose webhook is gone', () => {
  it('ends quietly: its job is gone, nothing is sent and nothing is logged above info', async () => {
    const p = await t.db.prisma.project.create({ data: { name: 'Unhooked', slug: 'unhooked', repositoryUrl: 'https://example.com/unhooked.git' } });
    const hook = await t.db.prisma.webhook.create({
      data: { projectId: p.id, url: 'https://example.com/hook', events: ['build:triggered'], secretEncrypted: 'not used' },
    });
    const b = await t.db.prisma.build.create({ data: { projectId: p.id } });
    expect(await queueBuildEvent(t.db.prisma, t.services.events, b, 'build:triggered')).toBe(1);
    const job = await t.db.prisma.job.findFirstOrThrow({ where: { task: DELIVER_TASK, groupKey: `project:${p.id}` } });
    await t.db.prisma.webhook.delete({ where: { id: hook.id } });
    const { log, lines } = recordingLog();
    const worker = new Worker({ ...pipelineDeps(t), log }, { concurrency: 0 });
    await worker.start();
    try {
      await until('the delivery job to end', async () => (await t.db.prisma.job.count({ where: { id: job.id } })) === 0, 20_000, 50);
    } finally {
      await worker.stop(1000);
    }
    expect(lines.filter((l) => (l.level as number) >= 40)).toEqual([]);
  });
});

describe('housekeeping', () => {
  it('is one recurring job for all workers: what outlived its keeping goes, and it is due again in half a lease', async () => {
    const task = taskName();
    await addJobs(t.db.prisma, [{ task, payload: {} }]);
    await t.db.prisma.job.updateMany({ where: { task }, data: { state: 'failed', updatedAt: new Date(Date.now() - 31 * 86_400_000) } });
    // Not the one an earlier test's worker left, due half of its minute's lease later.
    await t.db.prisma.job.deleteMany({ where: { key: HOUSEKEEPING_TASK } });
    const workers = [0, 1].map(() => new Worker(pipelineDeps(t), { concurrency: 0, leaseSeconds: 2 }));
    try {
      await Promise.all(workers.map((w) => w.start()));
      await until('the ended job pruned', async () => (await all(task)).length === 0, 20_000, 50);
      await until('housekeeping due again', async () => (await t.db.prisma.job.findUnique({ where: { key: HOUSEKEEPING_TASK } }))?.state === 'queued');
      const rows = await t.db.prisma.job.findMany({ where: { task: HOUSEKEEPING_TASK } });
      expect(rows).toEqual([expect.objectContaining({ key: HOUSEKEEPING_TASK, attempts: 0, lastError: null, workerId: null })]);
      // Half of the two-second lease from its last run (the database's clock against this one's: a second of slack).
      expect(Math.abs(rows[0]!.runAt.getTime() - rows[0]!.updatedAt.getTime() - 1000)).toBeLessThan(1000);
    } finally {
      await Promise.all(workers.map((w) => w.stop(1000)));
    }
  });
});

describe('a delivery given back when its worker stops', () => {
  it('records nothing when its request ends after: the job waits for another worker, its run not counted', async () => {
    // A receiver that takes the request and never answers.
    const arrived: string[] = [];
    const receiver = createServer((req) => arrived.push(req.url ?? '')).listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const p = await t.db.prisma.project.create({ data: { name: 'Held', slug: 'held', repositoryUrl: 'https://example.com/held.git' } });
    const hook = await t.db.prisma.webhook.create({
      data: {
        projectId: p.id,
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hold`,
        events: ['build:triggered'],
        secretEncrypted: new Cipher(TEST_SECRET_KEY).encrypt('held-secret'),
      },
    });
    const b = await t.db.prisma.build.create({ data: { projectId: p.id } });
    expect(await queueBuildEvent(t.db.prisma, t.services.events, b, 'build:triggered')).toBe(1);
    const deps = pipelineDeps(t);
    const { log, lines } = recordingLog();
    const worker = new Worker({ ...deps, log, notify: { ...deps.notify!, webhooks: { allow: ['127.0.0.0/8'], timeoutSeconds: 1 } } }, { concurrency: 0 });
    try {
      await worker.start();
      await until('the request to arrive', () => arrived.length === 1, 20_000, 20);
      await worker.stop(0);
      const writes = t.writes();
      const job = await t.db.prisma.job.findFirstOrThrow({ where: { task: DELIVER_TASK, groupKey: `project:${p.id}` } });
      const delivery = await t.db.prisma.notificationDelivery.findFirstOrThrow({ where: { webhookId: hook.id } });
      // The run that went on ends at the receiver's timeout, and writes nothing.
      await until('the run to end', () => lines.some((l) => l.job === job.id && /ended its run: nothing recorded/.test(String(l.msg))), 20_000, 20);
      expect(t.writes()).toBe(writes);
      expect(await t.db.prisma.job.findUniqueOrThrow({ where: { id: job.id } })).toMatchObject({
        state: 'queued',
        attempts: 0,
        workerId: null,
        lastError: null,
      });
      expect(await t.db.prisma.notificationDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).toEqual(delivery);
      expect(delivery).toMatchObject({ state: 'queued', attempts: 0 });
    } finally {
      receiver.closeAllConnections();
      receiver.close();
      await t.db.prisma.project.delete({ where: { id: p.id } });
      await t.db.prisma.job.deleteMany({ where: { task: DELIVER_TASK, groupKey: `project:${p.id}` } });
    }
  });
});

type Session = Awaited<ReturnType<typeof pgSession>>;

/**
 * A new database migrated to just before the migration `name`, given `seed`, then migrated through
 * `name` (not further): `check` reads what it made of the seed.
 */
async function acrossMigration(name: RegExp, seed: string, check: (session: Session) => Promise<void>): Promise<void> {
  const migrations = await readMigrations();
  const at = migrations.findIndex((m) => name.test(m.name));
  expect(at).toBeGreaterThan(0);
  const { session, drop } =
    dbKind() === 'postgres'
      ? await emptyPostgresDatabase().then(async (db) => ({ session: await pgSession(db.url), drop: db.drop }))
      : await emptyEmbeddedSession('lectern-jobs-migration-');
  try {
    await migrate(session, migrations.slice(0, at));
    await session.exec(seed);
    await migrate(session, migrations.slice(0, at + 1));
    await check(session);
  } finally {
    await session.close();
    await drop();
  }
}

describe('the migration to the job queue', () => {
  it('turns each version sync into a keyed job and each delivery still to send into a job of its project', async () => {
    const seed = `
      INSERT INTO "Project" ("id", "name", "slug", "repositoryUrl") VALUES (7, 'p', 'p', 'https://example.com/p.git');
      INSERT INTO "VersionSyncJob" ("projectId", "state", "attempts", "lastError", "updatedAt") VALUES (7, 'failed', 8, 'unreachable', now());
      INSERT INTO "Build" ("id", "projectId", "state") VALUES (70, 7, 'finished');
      INSERT INTO "Webhook" ("id", "projectId", "url", "events", "secretEncrypted") VALUES (1, 7, 'https://example.com/h', '{build:passed}', 'x');
      INSERT INTO "NotificationDelivery" ("id", "webhookId", "event", "buildId", "state", "attempts") VALUES
        (1, 1, 'build:passed', 70, 'queued', 2), (2, 1, 'build:passed', 70, 'running', 3), (3, 1, 'build:passed', 70, 'delivered', 1);`;
    await acrossMigration(/^\d+_jobs$/, seed, async (session) => {
      const jobs = await session.query<Record<string, unknown>>(
        `SELECT "task", "key", "payload", "groupKey", "state"::text AS "state", "attempts", "lastError" FROM "Job" ORDER BY "id"`,
      );
      expect(jobs).toEqual([
        {
          task: 'version-sync',
          key: 'version-sync:7',
          payload: { projectId: 7 },
          groupKey: 'project:7',
          state: 'failed',
          attempts: 8,
          lastError: 'unreachable',
        },
        { task: 'deliver', key: null, payload: { deliveryId: 1 }, groupKey: 'project:7', state: 'queued', attempts: 2, lastError: null },
        // Its worker's attempt was never recorded: given back, not counted.
        { task: 'deliver', key: null, payload: { deliveryId: 2 }, groupKey: 'project:7', state: 'queued', attempts: 2, lastError: null },
      ]);
      const deliveries = await session.query<{ id: number; state: string; attempts: number }>(
        `SELECT "id", "state"::text AS "state", "attempts" FROM "NotificationDelivery" ORDER BY "id"`,
      );
      expect(deliveries).toEqual([
        { id: 1, state: 'queued', attempts: 2 },
        { id: 2, state: 'queued', attempts: 2 },
        { id: 3, state: 'delivered', attempts: 1 },
      ]);
    });
  }, 120_000); // every migration from an empty database: slow on a busy machine

  it("turns each build not finished into a job of its project, with the project's limit, a running one under its worker's lease", async () => {
    const seed = `
      INSERT INTO "Project" ("id", "name", "slug", "repositoryUrl", "maxConcurrentBuilds") VALUES
        (7, 'p', 'p', 'https://example.com/p.git', 1), (8, 'q', 'q', 'https://example.com/q.git', NULL);
      INSERT INTO "Build" ("id", "projectId", "state", "workerId", "leaseExpiresAt", "attempts") VALUES
        (70, 7, 'finished', NULL, NULL, 1),
        (71, 7, 'building', 'w1', '2030-01-01T00:00:00Z', 1),
        (72, 7, 'triggered', NULL, NULL, 0),
        (80, 8, 'triggered', NULL, NULL, 1);`;
    await acrossMigration(/^\d+_build_jobs$/, seed, async (session) => {
      const jobs = await session.query<Record<string, unknown>>(
        `SELECT "task", "payload", "groupKey", "groupLimit", "state"::text AS "state", "attempts", "workerId", "leaseExpiresAt" IS NOT NULL AS "leased" FROM "Job" ORDER BY "id"`,
      );
      const job = { task: 'build', groupKey: 'project:7', groupLimit: 1, workerId: null, leased: false };
      expect(jobs).toEqual([
        { ...job, payload: { buildId: 71 }, state: 'running', attempts: 1, workerId: 'w1', leased: true },
        { ...job, payload: { buildId: 72 }, state: 'queued', attempts: 0 },
        // Its first run was lost with its worker: one is left.
        { ...job, payload: { buildId: 80 }, groupKey: 'project:8', groupLimit: 4, state: 'queued', attempts: 1 },
      ]);
    });
  }, 120_000);
});
