// Outgoing notifications (webhooks, commit statuses, emails) as jobs of the one job queue
// (jobs.ts, docs/design/jobs.md): a build event writes one NotificationDelivery row per recipient,
// the record GraphQL shows, and a `deliver` job for each, in the transaction that made the event, so
// an event is never lost nor sent for something rolled back. A worker runs the job: it POSTs
// (../notifications/send.ts) and records the outcome here. A receiver that fails or does not answer
// is tried again later, with capped and jittered exponential backoff, until the attempts run out.
// A build never waits for a delivery, and a delivery never fails a build.

import type { PrismaClient } from '../db/database.ts';
import type { Events } from '../events.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { addJobs, type FailedRun, type RetryPolicy } from './jobs.ts';

export const WEBHOOK_EVENTS = ['build:triggered', 'build:passed', 'build:failed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The job queue's task that sends one delivery: payload `{ deliveryId }`. */
export const DELIVER_TASK = 'deliver';

/** Seven attempts over about ten minutes: a receiver's restart or a short outage, not a day. */
export const DEFAULT_DELIVERY_RETRY: RetryPolicy = { baseSeconds: 5, capSeconds: 300, maxAttempts: 7 };

type Db = PrismaClient | Prisma.TransactionClient;

/**
 * Queues the event for every webhook of the build's project subscribed to it, a pull request
 * preview's commit status, and, with `email` (the installation sends email), an email to each
 * maintainer when a build of the default version fails, or passes after one that failed (unless
 * the project or the maintainer turned them off; docs/design/email.md): one statement, and a NOTIFY that wakes workers in other processes when
 * it commits. The app's `deliveryQueued` wakes its own worker (the embedded database has no
 * NOTIFY); inside a transaction it may come before the commit, and the caller's own announcement
 * after it (announceBuild) wakes the worker again.
 */
export async function queueBuildEvent(
  db: Db,
  events: Events,
  build: { id: number; projectId: number },
  event: WebhookEvent,
  opts: { email?: boolean } = {},
): Promise<number> {
  const email = opts.email === true && event !== 'build:triggered';
  // A preview's status goes through the integration its event came in by, when that has a token.
  const made = await db.$queryRaw<{ id: number }[]>`
    INSERT INTO "NotificationDelivery" ("kind", "webhookId", "integrationId", "event", "buildId", "userId")
    SELECT 'webhook', w."id", NULL::int, ${event}, ${build.id}, NULL::int FROM "Webhook" w
    WHERE w."projectId" = ${build.projectId} AND ${event} = ANY(w."events")
    UNION ALL
    SELECT 'status', NULL::int, i."id", ${event}, b."id", NULL::int FROM "Build" b
    JOIN "Version" v ON v."id" = b."versionId"
    JOIN "Integration" i ON i."projectId" = b."projectId" AND i."id" = (v."externalSource"->>'integrationId')::int
    WHERE b."id" = ${build.id} AND v."type" = 'external' AND i."tokenEncrypted" IS NOT NULL
    UNION ALL
    SELECT 'email', NULL::int, NULL::int, ${event}, b."id", u."id" FROM "Build" b
    JOIN "Version" v ON v."id" = b."versionId"
    JOIN "Project" p ON p."id" = b."projectId"
    JOIN "_ProjectMaintainers" m ON m."A" = p."id"
    JOIN "User" u ON u."id" = m."B"
    WHERE ${email} AND b."id" = ${build.id} AND v."type" <> 'external' AND v."slug" = p."defaultVersion" AND p."emailNotifications"
      AND u."emailNotifications" AND u."disabledAt" IS NULL AND COALESCE(u."email", '') <> ''
      AND (${event} = 'build:failed' OR (
        SELECT e."success" FROM "Build" e
        WHERE e."versionId" = b."versionId" AND e."state" = 'finished' AND e."id" <> b."id" AND e."createdAt" <= b."createdAt"
        ORDER BY e."createdAt" DESC, e."id" DESC LIMIT 1) IS FALSE)
    RETURNING "id"`;
  if (made.length > 0) {
    await addJobs(
      db,
      made.map((d) => ({ task: DELIVER_TASK, payload: { deliveryId: d.id }, groupKey: `project:${build.projectId}` })),
    );
    events.emit('deliveryQueued');
  }
  return made.length;
}

/** The event a finished build sends. */
export function finishedEvent(success: boolean | null): WebhookEvent {
  return success ? 'build:passed' : 'build:failed';
}

/** Queues `build:passed`/`build:failed` for builds that have just finished (by id). */
export async function queueFinishedEvents(db: Db, events: Events, buildIds: number[], opts: { email?: boolean } = {}): Promise<void> {
  if (!buildIds.length) return;
  const builds = await db.build.findMany({ where: { id: { in: buildIds }, state: 'finished' }, select: { id: true, projectId: true, success: true } });
  for (const b of builds) await queueBuildEvent(db, events, b, finishedEvent(b.success), opts);
}

export interface ClaimedDelivery {
  id: number;
  kind: 'webhook' | 'status' | 'email';
  webhookId: number | null;
  /** An email's recipient. */
  userId: number | null;
  integrationId: number | null;
  event: WebhookEvent;
  buildId: number;
  /** The build's project (null when the build is gone). */
  projectId: number | null;
  /** This attempt's number: 1 for the first. */
  attempts: number;
}

/** The delivery a `deliver` job's run `attempts` sends, marked running; null when it is gone (its webhook deleted). */
export async function startAttempt(db: PrismaClient, deliveryId: number, attempts: number): Promise<ClaimedDelivery | null> {
  const rows = await db.$queryRaw<ClaimedDelivery[]>`
    UPDATE "NotificationDelivery" SET "state" = 'running', "attempts" = ${attempts}
    WHERE "id" = ${deliveryId}
    RETURNING "id", "kind", "webhookId", "integrationId", "userId", "event", "buildId", "attempts",
      (SELECT b."projectId" FROM "Build" b WHERE b."id" = "NotificationDelivery"."buildId") AS "projectId"`;
  return rows[0] ?? null;
}

export interface Outcome {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** Whether an attempt delivered: a 2xx answer. */
export const delivered = (o: Outcome) => o.error === null && o.statusCode !== null && o.statusCode >= 200 && o.statusCode < 300;

/**
 * Records an attempt's outcome: `delivered`, or as its job now stands (`run`: queued again, due at
 * its runAt, or failed for good).
 */
export async function recordAttempt(db: PrismaClient, id: number, outcome: Outcome, run: FailedRun | 'delivered'): Promise<void> {
  const state = run === 'delivered' ? 'delivered' : run.state;
  const runAt = run === 'delivered' ? null : run.runAt;
  await db.$executeRaw`
    UPDATE "NotificationDelivery" SET
      "state" = ${state}::"OutgoingState", "runAt" = COALESCE(${runAt}::timestamp(3), "runAt"),
      "statusCode" = ${outcome.statusCode}, "error" = ${outcome.error}, "durationMs" = ${outcome.durationMs}, "lastAttemptAt" = now()
    WHERE "id" = ${id}`;
}

/** A delivery whose job's worker died mid-attempt: as the job now stands, saying why. */
export async function recordLost(db: PrismaClient, id: number, run: FailedRun, error: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "NotificationDelivery" SET "state" = ${run.state}::"OutgoingState", "runAt" = ${run.runAt}::timestamp(3), "error" = ${error}
    WHERE "id" = ${id}`;
}

/** A delivery given back to the queue (graceful shutdown): waiting again, due now. */
export async function recordReleased(db: PrismaClient, id: number): Promise<void> {
  await db.$executeRaw`
    UPDATE "NotificationDelivery" SET "state" = 'queued', "attempts" = GREATEST("attempts" - 1, 0), "runAt" = now()
    WHERE "id" = ${id} AND "state" = 'running'`;
}
