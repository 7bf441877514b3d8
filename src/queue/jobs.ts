// One job queue for background work (docs/design/jobs.md), in the shape of graphile-worker: one
// table (Job) keyed by task name, one statement that claims (FOR UPDATE SKIP LOCKED, a lease the
// worker renews), capped and jittered exponential backoff, job keys that coalesce requests, turns
// between groups (projects), and one NOTIFY channel that wakes the workers of every process.
// A job that succeeds is deleted, a keyed one kept `done` as its key's record; one that used its
// attempts stays `failed` with its error. Ended jobs go after FAILED_JOB_RETENTION_DAYS.
// @see https://github.com/graphile/worker src/sql/addJob.ts (job keys), src/sql/getJobs.ts, src/sql/failJobs.ts
// @see https://github.com/timgit/pg-boss src/plans.ts (retryBackoff: jittered, capped by retryDelayMax)
import type { PrismaClient } from '../db/database.ts';
import { Prisma } from '../generated/prisma/client.ts';

type Db = PrismaClient | Prisma.TransactionClient;

/** The channel every job (and every build) NOTIFYs when queued: each worker LISTENs on it. */
export const JOBS_CHANNEL = 'lectern_jobs';

/** The recurring job (its task and its key) that removes what outlived its keeping, for all workers. */
export const HOUSEKEEPING_TASK = 'housekeeping';

export interface RetryPolicy {
  /** Wait after the first failed run; it doubles after each further one. */
  baseSeconds: number;
  /** Longest wait between two runs. */
  capSeconds: number;
  /** Runs of one request before it is left `failed`. */
  maxAttempts: number;
}

/**
 * Seconds to wait before the next run after `attempts` failed ones: min(cap, base·2^(attempts-1)),
 * times a jitter in [0.5, 1) so that jobs failing together (a git host down) do not come back
 * together. The ranges of successive attempts touch but do not overlap, so waits never shrink.
 */
export function retryDelaySeconds(attempts: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exponential = Math.min(policy.capSeconds, policy.baseSeconds * 2 ** Math.min(Math.max(attempts - 1, 0), 30));
  return exponential * (0.5 + random() / 2);
}

export interface NewJob {
  task: string;
  payload: Record<string, unknown>;
  /** Jobs of one group take turns with other groups' for a worker's slots: `project:<id>`. */
  groupKey?: string | null;
  /** At most this many of the task's jobs of the group run at once, across all workers. */
  groupLimit?: number | null;
}

/**
 * Adds a job under `key`, coalescing as graphile-worker's job keys do: a waiting job of that key
 * (or a failed one) becomes one fresh request, due now, attempts and error reset; a running one
 * cannot be changed, as it may have read what this request is about too early, so it is marked to
 * run `again` once it ends. Its NOTIFY wakes workers in other processes when the statement commits.
 */
export async function addKeyedJob(db: Db, key: string, job: NewJob): Promise<void> {
  await db.$executeRaw`
    WITH job AS (
      INSERT INTO "Job" AS j ("task", "key", "payload", "groupKey", "state", "runAt", "updatedAt")
      VALUES (${job.task}, ${key}, ${JSON.stringify(job.payload)}::jsonb, ${job.groupKey ?? null}, 'queued', now(), now())
      ON CONFLICT ("key") DO UPDATE SET
        "state" = CASE WHEN j."state" = 'running' THEN j."state" ELSE 'queued'::"JobState" END,
        "again" = j."state" = 'running',
        "runAt" = CASE j."state" WHEN 'running' THEN j."runAt" WHEN 'queued' THEN LEAST(j."runAt", now()) ELSE now() END,
        "attempts" = CASE WHEN j."state" = 'running' THEN j."attempts" ELSE 0 END,
        "lastError" = CASE WHEN j."state" = 'running' THEN j."lastError" ELSE NULL END,
        "updatedAt" = now()
      RETURNING j."id"
    )
    SELECT pg_notify(${JOBS_CHANNEL}, ${job.task}) FROM job`;
}

/** Adds jobs without a key, each its own, in one statement. */
export async function addJobs(db: Db, jobs: NewJob[]): Promise<void> {
  if (!jobs.length) return;
  const rows = JSON.stringify(jobs.map((j) => ({ task: j.task, payload: j.payload, groupKey: j.groupKey ?? null, groupLimit: j.groupLimit ?? null })));
  await db.$executeRaw`
    WITH job AS (
      INSERT INTO "Job" ("task", "payload", "groupKey", "groupLimit", "updatedAt")
      SELECT x->>'task', x->'payload', x->>'groupKey', (x->>'groupLimit')::int, now() FROM jsonb_array_elements(${rows}::jsonb) AS x
      RETURNING "task"
    )
    SELECT pg_notify(${JOBS_CHANNEL}, t."task") FROM (SELECT DISTINCT "task" FROM job) t`;
}

export interface ClaimedJob<P = Record<string, unknown>> {
  id: number;
  task: string;
  payload: P;
  groupKey: string | null;
  /** This run's number: 1 for the first. */
  attempts: number;
}

/** What a worker can take now: the tasks it has a free slot for, and the groups of each that have had their turn. */
export interface Wanted {
  tasks: string[];
  /** `<task>|<group key>` of the groups that hold their share of the task's slots in this worker. */
  busy: string[];
}

const list = (items: string[]) => items.join('\n');

/**
 * The jobs among `wanted` (its tasks, but the groups that have had their turn) that may run now:
 * of a group with a limit, only while fewer than it run, across all workers. `q` is the job.
 */
const claimable = (wanted: Wanted) => Prisma.sql`q."task" = ANY(string_to_array(${list(wanted.tasks)}, E'\n'))
  AND NOT ((q."task" || '|' || COALESCE(q."groupKey", '')) = ANY(string_to_array(${list(wanted.busy)}, E'\n')))
  AND (q."groupLimit" IS NULL
    OR (SELECT count(*) FROM "Job" r WHERE r."groupKey" = q."groupKey" AND r."task" = q."task" AND r."state" = 'running') < q."groupLimit")`;

/** Claims the job due first among `wanted`, for `leaseSeconds`: the one claiming statement. */
export async function claimJob(db: PrismaClient, workerId: string, leaseSeconds: number, wanted: Wanted): Promise<ClaimedJob | null> {
  const rows = await db.$queryRaw<ClaimedJob[]>`
    UPDATE "Job" j SET
      "state" = 'running',
      "workerId" = ${workerId},
      "leaseExpiresAt" = now() + make_interval(secs => ${leaseSeconds}::double precision),
      "attempts" = j."attempts" + 1,
      "again" = false,
      "updatedAt" = now()
    WHERE j."id" = (
      SELECT q."id" FROM "Job" q
      WHERE q."state" = 'queued' AND q."runAt" <= now() AND ${claimable(wanted)}
      ORDER BY q."runAt", q."id"
      LIMIT 1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING j."id", j."task", j."payload", j."groupKey", j."attempts"`;
  return rows[0] ?? null;
}

/** Milliseconds until the next job among `wanted` is due (0 when one is due now); null when none waits. */
export async function nextJobDueMs(db: PrismaClient, wanted: Wanted): Promise<number | null> {
  // Both sides in the database's clock: runAt was written from its now().
  const rows = await db.$queryRaw<{ ms: number | null }[]>`
    SELECT (EXTRACT(EPOCH FROM (min(q."runAt") - now()::timestamp(3))) * 1000)::float8 AS "ms"
    FROM "Job" q
    WHERE q."state" = 'queued' AND ${claimable(wanted)}`;
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? null : Math.max(0, ms);
}

/** Renews the lease; false when the job is no longer this worker's. */
export async function heartbeatJob(db: PrismaClient, id: number, workerId: string, leaseSeconds: number): Promise<boolean> {
  const n = await db.$executeRaw`
    UPDATE "Job" SET "leaseExpiresAt" = now() + make_interval(secs => ${leaseSeconds}::double precision)
    WHERE "id" = ${id} AND "workerId" = ${workerId} AND "state" = 'running'`;
  return n === 1;
}

/**
 * The run succeeded: a job without a key is deleted; a keyed one is kept `done` as its key's record,
 * or queued afresh when it was asked for again meanwhile. A job queued again, or one of a group with
 * a limit (which frees a place for the group's next), wakes the workers.
 */
export async function completeJob(db: PrismaClient, id: number, workerId: string): Promise<void> {
  // Only a keyed job can be asked for again, so this cannot race with a new request.
  await db.$executeRaw`
    WITH gone AS (
      DELETE FROM "Job" WHERE "id" = ${id} AND "workerId" = ${workerId} AND "state" = 'running' AND "key" IS NULL
      RETURNING "task", "groupLimit"
    ), ended AS (
      UPDATE "Job" SET
        "state" = CASE WHEN "again" THEN 'queued'::"JobState" ELSE 'done'::"JobState" END,
        "attempts" = CASE WHEN "again" THEN 0 ELSE "attempts" END,
        "runAt" = now(), "again" = false, "lastError" = NULL, "workerId" = NULL, "leaseExpiresAt" = NULL, "updatedAt" = now()
      WHERE "id" = ${id} AND "workerId" = ${workerId} AND "state" = 'running' AND "key" IS NOT NULL
      RETURNING "task", "state", "groupLimit"
    )
    SELECT pg_notify(${JOBS_CHANNEL}, "task") FROM gone WHERE "groupLimit" IS NOT NULL
    UNION ALL
    SELECT pg_notify(${JOBS_CHANNEL}, "task") FROM ended WHERE "state" = 'queued' OR "groupLimit" IS NOT NULL`;
}

/**
 * Makes sure the recurring job `key` waits to run: added due now when there is none, queued again
 * due now when it ended (failed, or done by an older version); left alone while it waits or runs.
 */
export async function ensureRecurringJob(db: Db, key: string, job: NewJob): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "Job" AS j ("task", "key", "payload", "groupKey", "state", "runAt", "updatedAt")
    VALUES (${job.task}, ${key}, ${JSON.stringify(job.payload)}::jsonb, ${job.groupKey ?? null}, 'queued', now(), now())
    ON CONFLICT ("key") DO UPDATE SET "state" = 'queued', "runAt" = now(), "attempts" = 0, "lastError" = NULL, "updatedAt" = now()
    WHERE j."state" IN ('done', 'failed')`;
}

/** Ends a run of a recurring job, successful or not (`error`): due again in `delaySeconds`. */
export async function rescheduleJob(db: PrismaClient, id: number, workerId: string, delaySeconds: number, error: string | null = null): Promise<void> {
  await db.$executeRaw`
    UPDATE "Job" SET "state" = 'queued', "runAt" = now() + make_interval(secs => ${delaySeconds}::double precision),
      "attempts" = 0, "again" = false, "lastError" = ${error}, "workerId" = NULL, "leaseExpiresAt" = NULL, "updatedAt" = now()
    WHERE "id" = ${id} AND "workerId" = ${workerId} AND "state" = 'running'`;
}

export interface FailedRun {
  state: 'queued' | 'failed';
  attempts: number;
  /** When it is due again (when queued). */
  runAt: Date;
}

/**
 * The run failed with `error`: due again after `delaySeconds` (retryDelaySeconds) while it has
 * attempts left (`maxAttempts` runs in all), else left `failed` with the error. Asked for again
 * meanwhile, it starts over now, as a new request. Null when the job is no longer this worker's.
 */
export async function failJob(
  db: PrismaClient,
  id: number,
  workerId: string,
  error: string,
  delaySeconds: number,
  maxAttempts: number,
): Promise<FailedRun | null> {
  const rows = await db.$queryRaw<FailedRun[]>`
    UPDATE "Job" SET
      "state" = CASE WHEN "again" OR "attempts" < ${maxAttempts} THEN 'queued'::"JobState" ELSE 'failed'::"JobState" END,
      "runAt" = CASE WHEN NOT "again" AND "attempts" < ${maxAttempts} THEN now() + make_interval(secs => ${delaySeconds}::double precision) ELSE now() END,
      "attempts" = CASE WHEN "again" THEN 0 ELSE "attempts" END,
      "lastError" = ${error}, "again" = false, "workerId" = NULL, "leaseExpiresAt" = NULL, "updatedAt" = now()
    WHERE "id" = ${id} AND "workerId" = ${workerId} AND "state" = 'running'
    RETURNING "state"::text AS "state", "attempts", "runAt"`;
  return rows[0] ?? null;
}

export interface LostJob extends FailedRun {
  id: number;
  task: string;
  payload: Record<string, unknown>;
}

/** What a job whose lease ran out is told: its worker stopped before it ended. */
export const LOST_ERROR = 'The worker running this job stopped before it ended (its lease expired).';

/**
 * Jobs whose lease ran out (their worker died): due again at once, the lost run counted as an
 * attempt (a job that kills its worker must not loop), else `failed` saying why. `maxAttempts`:
 * each task's; a task not named gets one run.
 */
export async function reapExpiredJobs(db: Db, maxAttempts: Record<string, number>): Promise<LostJob[]> {
  return db.$queryRaw<LostJob[]>`
    UPDATE "Job" SET
      "state" = CASE WHEN "again" OR "attempts" < COALESCE((${JSON.stringify(maxAttempts)}::jsonb ->> "task")::int, 1)
        THEN 'queued'::"JobState" ELSE 'failed'::"JobState" END,
      "attempts" = CASE WHEN "again" THEN 0 ELSE "attempts" END,
      "lastError" = ${LOST_ERROR},
      "runAt" = now(), "again" = false, "workerId" = NULL, "leaseExpiresAt" = NULL, "updatedAt" = now()
    WHERE "state" = 'running' AND "leaseExpiresAt" < now()
    RETURNING "id", "task", "payload", "state"::text AS "state", "attempts", "runAt"`;
}

/** Gives a running job back, due now, its attempt not counted (graceful shutdown). */
export async function releaseJob(db: PrismaClient, id: number, workerId: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "Job" SET "state" = 'queued', "attempts" = GREATEST("attempts" - 1, 0), "runAt" = now(),
      "workerId" = NULL, "leaseExpiresAt" = NULL, "updatedAt" = now()
    WHERE "id" = ${id} AND "workerId" = ${workerId} AND "state" = 'running'`;
}

/** Ended jobs (failed, or keyed and done) kept this long, then deleted: long enough to read why, not forever. */
export const FAILED_JOB_RETENTION_DAYS = 30;

/** Deletes ended jobs older than the retention (a deleted project's sync, say). */
export async function pruneEndedJobs(db: PrismaClient, days = FAILED_JOB_RETENTION_DAYS): Promise<number> {
  return db.$executeRaw`
    DELETE FROM "Job" WHERE "state" IN ('failed', 'done') AND "updatedAt" < now() - make_interval(days => ${days}::int)`;
}

/** An error's message fit to store and log: credentials in URLs (`https://user:token@host`) masked, bounded. */
export function describeJobError(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return message.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, '$1***@').slice(0, 2000);
}
