// The build queue is the Build table itself: a `triggered` row is waiting. Workers claim in one
// statement with FOR UPDATE SKIP LOCKED (each build exactly once, however many workers share the
// database), hold a lease they renew with heartbeats, and a build whose lease ran out (its worker
// died) is retried once, then finished as failed with a message saying so.
// @see https://github.com/graphile/worker src/sql/getJobs.ts, timgit/pg-boss src/plans.ts
import type { PrismaClient } from '../db/database.ts';
import type { Build } from '../generated/prisma/client.ts';

export const DEFAULT_MAX_CONCURRENT_PER_PROJECT = 4;
export const MAX_ATTEMPTS = 2;

/**
 * Claims the oldest waiting build whose project is under its concurrency limit and moves it to
 * `cloning`. The limit is read without locking the project, so two workers racing on one
 * project may together exceed it by one: a soft limit, in exchange for one cheap statement.
 */
export async function claimBuild(db: PrismaClient, workerId: string, leaseSeconds: number): Promise<Build | null> {
  const rows = await db.$queryRaw<Build[]>`
    UPDATE "Build" SET
      "state" = 'cloning',
      "workerId" = ${workerId},
      "leaseExpiresAt" = now() + make_interval(secs => ${leaseSeconds}::double precision),
      "startedAt" = now(),
      "attempts" = "attempts" + 1
    WHERE "id" = (
      SELECT b."id" FROM "Build" b
      JOIN "Project" p ON p."id" = b."projectId"
      WHERE b."state" = 'triggered'
        AND (SELECT count(*) FROM "Build" r
             WHERE r."projectId" = b."projectId" AND r."state" IN ('cloning', 'installing', 'building'))
            < COALESCE(p."maxConcurrentBuilds", ${DEFAULT_MAX_CONCURRENT_PER_PROJECT})
      ORDER BY b."createdAt", b."id"
      LIMIT 1
      FOR UPDATE OF b SKIP LOCKED
    )
    RETURNING *`;
  return rows[0] ?? null;
}

/** Renews the lease; false when the build is no longer this worker's (finished, or reclaimed). */
export async function heartbeat(db: PrismaClient, buildId: number, workerId: string, leaseSeconds: number): Promise<boolean> {
  const n = await db.$executeRaw`
    UPDATE "Build" SET "leaseExpiresAt" = now() + make_interval(secs => ${leaseSeconds}::double precision)
    WHERE "id" = ${buildId} AND "workerId" = ${workerId} AND "state" <> 'finished'`;
  return n === 1;
}

/**
 * Builds whose lease ran out: retried when they have attempts left, else finished as failed.
 * Returns the ids put back in the queue and the ids failed.
 */
export async function reapExpired(db: PrismaClient): Promise<{ retried: number[]; failed: number[] }> {
  // A retried build starts over: the commands of the attempt that died are not its record. They
  // go in the same statement, so no worker can claim the build and record a command in between.
  const retried = await db.$queryRaw<{ id: number }[]>`
    WITH r AS (
      UPDATE "Build" SET "state" = 'triggered', "workerId" = NULL, "leaseExpiresAt" = NULL
      WHERE "state" IN ('cloning', 'installing', 'building') AND "leaseExpiresAt" < now() AND "attempts" < ${MAX_ATTEMPTS}
      RETURNING "id"
    ), gone AS (DELETE FROM "BuildCommand" WHERE "buildId" IN (SELECT "id" FROM r))
    SELECT "id" FROM r`;
  const failed = await db.$queryRaw<{ id: number }[]>`
    UPDATE "Build" SET
      "state" = 'finished',
      "success" = false,
      "error" = 'The worker running this build stopped (its lease expired) and the build was not retried again: trigger a new build.',
      "finishedAt" = now(),
      "length" = GREATEST(0, EXTRACT(EPOCH FROM now() - COALESCE("startedAt", "createdAt"))::int),
      "leaseExpiresAt" = NULL
    WHERE "state" IN ('cloning', 'installing', 'building') AND "leaseExpiresAt" < now()
    RETURNING "id"`;
  return { retried: retried.map((r) => r.id), failed: failed.map((r) => r.id) };
}

/** Gives a build back to the queue (graceful shutdown), unless it already finished. */
export async function releaseBuild(db: PrismaClient, buildId: number, workerId: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "Build" SET "state" = 'triggered', "workerId" = NULL, "leaseExpiresAt" = NULL,
      "attempts" = GREATEST("attempts" - 1, 0)
    WHERE "id" = ${buildId} AND "workerId" = ${workerId} AND "state" <> 'finished'`;
  await db.buildCommand.deleteMany({ where: { buildId } });
}
