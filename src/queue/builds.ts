// Builds are jobs of the one job queue (src/queue/jobs.ts, docs/design/jobs.md "Builds"): task
// `build`, payload `{ buildId }`, grouped by project with the project's build limit counted in the
// claim. The Build row is the build's record (its state, commands, outcome); the job holds its place
// in the queue, its lease and its runs. A build whose worker died is run once more, from the start,
// then finished as failed with a message saying so.
import type { PrismaClient } from '../db/database.ts';
import type { Build, Prisma } from '../generated/prisma/client.ts';
import { JOBS_CHANNEL } from './jobs.ts';

type Db = PrismaClient | Prisma.TransactionClient;

export const BUILD_TASK = 'build';
/** Builds of one project running at once, across all workers, unless the project says otherwise. */
export const DEFAULT_MAX_CONCURRENT_PER_PROJECT = 4;
/** A build's runs: the first, and one more when the worker running it died. */
export const BUILD_ATTEMPTS = 2;

/** What a build whose worker died on each of its runs is finished with. */
export const LOST_BUILD_ERROR = 'The worker running this build stopped (its lease expired) and the build was not retried again: trigger a new build.';

/**
 * Queues the job of a build just created, inside the transaction that created it, with its
 * project's build limit as it is now; the NOTIFY wakes workers in every process at commit.
 */
export async function queueBuildJob(tx: Db, build: { id: number; projectId: number }): Promise<void> {
  await tx.$executeRaw`
    WITH job AS (
      INSERT INTO "Job" ("task", "payload", "groupKey", "groupLimit", "updatedAt")
      SELECT ${BUILD_TASK}, jsonb_build_object('buildId', ${build.id}::int), 'project:' || p."id",
             COALESCE(p."maxConcurrentBuilds", ${DEFAULT_MAX_CONCURRENT_PER_PROJECT}), now()
      FROM "Project" p WHERE p."id" = ${build.projectId}
      RETURNING "task"
    )
    SELECT pg_notify(${JOBS_CHANNEL}, "task") FROM job`;
}

/**
 * Starts the build of a job this worker has claimed: it is this worker's from now on (the fence of
 * every write the build makes). Null when the build needs no run: finished before it started
 * (superseded, cancelled) or deleted with its project.
 */
export async function startBuild(db: Db, buildId: number, workerId: string): Promise<Build | null> {
  const rows = await db.$queryRaw<Build[]>`
    UPDATE "Build" SET "state" = 'cloning', "workerId" = ${workerId}, "startedAt" = now()
    WHERE "id" = ${buildId} AND "state" <> 'finished'
    RETURNING *`;
  return rows[0] ?? null;
}

/** Whether the build is still this worker's and unfinished: false once cancelled, deleted or taken back. */
export async function stillRunning(db: Db, buildId: number, workerId: string): Promise<boolean> {
  return (await db.build.count({ where: { id: buildId, workerId, state: { not: 'finished' } } })) === 1;
}

/**
 * The builds of jobs taken back from a worker that died, inside the transaction that took them
 * back (so no worker claims a job before its build is reset): those run again start over, queued,
 * the commands of the attempt that died gone; those out of runs end failed. Returns the builds
 * failed here.
 */
export async function takeBackBuilds(tx: Db, again: number[], failed: number[]): Promise<number[]> {
  if (again.length) await requeueBuilds(tx, again);
  if (!failed.length) return [];
  const ended = await tx.$queryRaw<{ id: number }[]>`
    UPDATE "Build" SET
      "state" = 'finished', "success" = false, "error" = ${LOST_BUILD_ERROR}, "finishedAt" = now(),
      "length" = GREATEST(0, EXTRACT(EPOCH FROM now() - COALESCE("startedAt", "createdAt"))::int)
    WHERE "id" = ANY(${failed}::int[]) AND "state" <> 'finished'
    RETURNING "id"`;
  return ended.map((r) => r.id);
}

/** A build given back to the queue by its worker (graceful shutdown), unless it finished. */
export async function releaseBuild(db: Db, buildId: number, workerId: string): Promise<void> {
  await requeueBuilds(db, [buildId], workerId);
}

/**
 * Builds waiting again, to start over, unless they finished (only `workerId`'s, when named): the
 * commands of the run that stopped go in the same statement, so no new run records one in between.
 */
async function requeueBuilds(db: Db, ids: number[], workerId: string | null = null): Promise<void> {
  await db.$executeRaw`
    WITH r AS (
      UPDATE "Build" SET "state" = 'triggered', "workerId" = NULL
      WHERE "id" = ANY(${ids}::int[]) AND "state" <> 'finished' AND (${workerId}::text IS NULL OR "workerId" = ${workerId})
      RETURNING "id"
    )
    DELETE FROM "BuildCommand" WHERE "buildId" IN (SELECT "id" FROM r)`;
}
