// Version syncs are jobs in the database, as builds are (queue.ts), so a sync asked for survives a
// restart and runs on a worker, never in the web process. One row per project (VersionSyncJob):
// requests made while it waits coalesce into it. Workers claim due rows in one statement with
// FOR UPDATE SKIP LOCKED and hold a lease they renew; a run that fails is tried again later, with
// capped and jittered exponential backoff, until it has used its attempts.
// @see https://github.com/graphile/worker src/sql/addJob.ts (job keys), src/sql/getJobs.ts, src/sql/failJobs.ts
// @see https://github.com/timgit/pg-boss src/plans.ts (retryBackoff: jittered, capped by retryDelayMax)
import type { PrismaClient } from '../db/database.ts';
import type { Events } from '../events.ts';
import { Prisma } from '../generated/prisma/client.ts';

export interface RetryPolicy {
  /** Wait after the first failed run; it doubles after each further one. */
  baseSeconds: number;
  /** Longest wait between two runs. */
  capSeconds: number;
  /** Runs of one request before it is left `failed`. */
  maxAttempts: number;
}

/** About 25 minutes from the first run to the last: enough for a git host's outage, not a day. */
export const DEFAULT_SYNC_RETRY: RetryPolicy = { baseSeconds: 10, capSeconds: 600, maxAttempts: 8 };

/** The wake-up channel the build worker LISTENs on: a sync queued wakes the same workers. */
const NOTIFY_CHANNEL = 'lectern_builds';

/**
 * Seconds to wait before the next run after `attempts` failed ones: min(cap, base·2^(attempts-1)),
 * times a jitter in [0.5, 1) so that syncs failing together (a git host down) do not come back
 * together. The ranges of successive attempts touch but do not overlap, so waits never shrink.
 */
export function retryDelaySeconds(attempts: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exponential = Math.min(policy.capSeconds, policy.baseSeconds * 2 ** Math.min(Math.max(attempts - 1, 0), 30));
  return exponential * (0.5 + random() / 2);
}

/**
 * Asks for a sync of the project's versions. Coalesces as graphile-worker's job keys do: a waiting
 * request (or a finished or failed one) becomes one fresh request, due now, attempts and error
 * reset; a sync already running cannot be changed, as it may have read the repository before what
 * this request is about, so it is marked to run `again` once it ends. The NOTIFY wakes workers in
 * other processes when the statement commits; the app's `syncQueued` wakes its own (the embedded
 * database has one process, and no NOTIFY to deliver).
 */
export async function queueVersionSync(db: PrismaClient, events: Events, projectId: number): Promise<void> {
  await db.$executeRaw`
    WITH job AS (
      INSERT INTO "VersionSyncJob" AS j ("projectId", "state", "runAt", "updatedAt")
      VALUES (${projectId}, 'queued', now(), now())
      ON CONFLICT ("projectId") DO UPDATE SET
        "state" = CASE WHEN j."state" = 'running' THEN j."state" ELSE 'queued'::"VersionSyncState" END,
        "again" = j."state" = 'running',
        "runAt" = CASE j."state" WHEN 'running' THEN j."runAt" WHEN 'queued' THEN LEAST(j."runAt", now()) ELSE now() END,
        "attempts" = CASE WHEN j."state" = 'running' THEN j."attempts" ELSE 0 END,
        "lastError" = CASE WHEN j."state" = 'running' THEN j."lastError" ELSE NULL END,
        "updatedAt" = now()
      RETURNING j."id"
    )
    SELECT pg_notify(${NOTIFY_CHANNEL}, 'version-sync:' || ${String(projectId)}::text) FROM job`;
  events.emit('syncQueued', { projectId });
}

export interface ClaimedVersionSync {
  id: number;
  projectId: number;
  /** This run's number: 1 for the first. */
  attempts: number;
  repositoryUrl: string;
}

/** Claims the waiting sync due first, for `leaseSeconds`, with the project's repository URL. */
export async function claimVersionSync(db: PrismaClient, workerId: string, leaseSeconds: number): Promise<ClaimedVersionSync | null> {
  const rows = await db.$queryRaw<ClaimedVersionSync[]>`
    UPDATE "VersionSyncJob" j SET
      "state" = 'running',
      "workerId" = ${workerId},
      "leaseExpiresAt" = now() + make_interval(secs => ${leaseSeconds}::double precision),
      "attempts" = j."attempts" + 1,
      "again" = false,
      "updatedAt" = now()
    FROM "Project" p
    WHERE p."id" = j."projectId" AND j."id" = (
      SELECT "id" FROM "VersionSyncJob"
      WHERE "state" = 'queued' AND "runAt" <= now()
      ORDER BY "runAt", "id"
      LIMIT 1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING j."id", j."projectId", j."attempts", p."repositoryUrl"`;
  return rows[0] ?? null;
}

/** Renews the lease; false when the sync is no longer this worker's. */
export async function heartbeatVersionSync(db: PrismaClient, id: number, workerId: string, leaseSeconds: number): Promise<boolean> {
  const n = await db.$executeRaw`
    UPDATE "VersionSyncJob" SET "leaseExpiresAt" = now() + make_interval(secs => ${leaseSeconds}::double precision)
    WHERE "id" = ${id} AND "workerId" = ${workerId} AND "state" = 'running'`;
  return n === 1;
}

/** The run succeeded: `done`, or queued afresh when it was asked for again meanwhile. */
export async function finishVersionSync(db: PrismaClient, id: number, workerId: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "VersionSyncJob" SET
      "state" = CASE WHEN "again" THEN 'queued'::"VersionSyncState" ELSE 'done'::"VersionSyncState" END,
      "attempts" = CASE WHEN "again" THEN 0 ELSE "attempts" END,
      "runAt" = now(), "again" = false, "lastError" = NULL, "workerId" = NULL, "leaseExpiresAt" = NULL, "updatedAt" = now()
    WHERE "id" = ${id} AND "workerId" = ${workerId} AND "state" = 'running'`;
}

/**
 * The run failed with `error`: due again after `delaySeconds` (retryDelaySeconds) while it has
 * attempts left, else left `failed` with the error. Asked for again meanwhile, it starts over now,
 * as a new request (the error is kept until a run succeeds).
 */
export async function failVersionSync(
  db: PrismaClient,
  id: number,
  workerId: string,
  error: string,
  delaySeconds: number,
  maxAttempts: number,
): Promise<{ state: string; attempts: number } | null> {
  const rows = await db.$queryRaw<{ state: string; attempts: number }[]>`
    UPDATE "VersionSyncJob" SET
      "state" = CASE WHEN "again" OR "attempts" < ${maxAttempts} THEN 'queued'::"VersionSyncState" ELSE 'failed'::"VersionSyncState" END,
      "runAt" = CASE WHEN NOT "again" AND "attempts" < ${maxAttempts} THEN now() + make_interval(secs => ${delaySeconds}::double precision) ELSE now() END,
      "attempts" = CASE WHEN "again" THEN 0 ELSE "attempts" END,
      "lastError" = ${error}, "again" = false, "workerId" = NULL, "leaseExpiresAt" = NULL, "updatedAt" = now()
    WHERE "id" = ${id} AND "workerId" = ${workerId} AND "state" = 'running'
    RETURNING "state"::text AS "state", "attempts"`;
  return rows[0] ?? null;
}

/**
 * Syncs whose lease ran out (their worker died): due again at once, the lost run counted as an
 * attempt (a sync that kills its worker must not loop), else `failed` saying why.
 */
export async function reapExpiredVersionSyncs(db: PrismaClient, maxAttempts: number): Promise<{ id: number; state: string }[]> {
  return db.$queryRaw<{ id: number; state: string }[]>`
    UPDATE "VersionSyncJob" SET
      "state" = CASE WHEN "again" OR "attempts" < ${maxAttempts} THEN 'queued'::"VersionSyncState" ELSE 'failed'::"VersionSyncState" END,
      "attempts" = CASE WHEN "again" THEN 0 ELSE "attempts" END,
      "lastError" = 'The worker running this sync stopped before it ended (its lease expired).',
      "runAt" = now(), "again" = false, "workerId" = NULL, "leaseExpiresAt" = NULL, "updatedAt" = now()
    WHERE "state" = 'running' AND "leaseExpiresAt" < now()
    RETURNING "id", "state"::text AS "state"`;
}

/** Gives a running sync back to the queue, due now, its attempt not counted (graceful shutdown). */
export async function releaseVersionSync(db: PrismaClient, id: number, workerId: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "VersionSyncJob" SET "state" = 'queued', "attempts" = GREATEST("attempts" - 1, 0), "runAt" = now(),
      "workerId" = NULL, "leaseExpiresAt" = NULL, "updatedAt" = now()
    WHERE "id" = ${id} AND "workerId" = ${workerId} AND "state" = 'running'`;
}

/**
 * Milliseconds until the next waiting job of a queue table (`queued`, due at `runAt`) is due: 0 when
 * one is due now, null when none waits.
 */
export async function nextDueMs(db: PrismaClient, table: 'VersionSyncJob' | 'NotificationDelivery'): Promise<number | null> {
  // Both sides in the database's clock: runAt was written from its now().
  const rows = await db.$queryRaw<{ ms: number | null }[]>`
    SELECT (EXTRACT(EPOCH FROM (min("runAt") - now()::timestamp(3))) * 1000)::float8 AS "ms"
    FROM ${Prisma.raw(`"${table}"`)} WHERE "state" = 'queued'`;
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? null : Math.max(0, ms);
}

/** Milliseconds until the next waiting sync is due (0 when one is due now); null when none waits. */
export const nextVersionSyncDueMs = (db: PrismaClient) => nextDueMs(db, 'VersionSyncJob');

/** An error's message fit to store and log: credentials in URLs (`https://user:token@host`) masked, bounded. */
export function describeSyncError(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return message.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, '$1***@').slice(0, 2000);
}
