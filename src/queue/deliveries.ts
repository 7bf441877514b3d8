// Outgoing webhook notifications as jobs in the database, as builds and version syncs are: a build
// event writes one NotificationDelivery row per subscribed webhook (in the transaction that made
// the event, so an event is never lost nor sent for something rolled back); workers claim due rows
// with FOR UPDATE SKIP LOCKED, POST them (../notifications/send.ts), and record the outcome. A receiver that fails
// or does not answer is tried again later, with capped and jittered exponential backoff
// (queue/version-syncs.ts retryDelaySeconds), until the attempts run out. A build never waits for a
// delivery, and a delivery never fails a build.

import type { PrismaClient } from '../db/database.ts';
import type { Events } from '../events.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { nextDueMs, type RetryPolicy } from './version-syncs.ts';

export const WEBHOOK_EVENTS = ['build:triggered', 'build:passed', 'build:failed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

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
  const n = await db.$executeRaw`
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
        ORDER BY e."createdAt" DESC, e."id" DESC LIMIT 1) IS FALSE)`;
  if (n > 0) {
    await db.$executeRaw`SELECT pg_notify('lectern_builds', 'notification')`;
    events.emit('deliveryQueued');
  }
  return n;
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
  /** The build's project (null when the build is gone): deliveries take turns by project. */
  projectId: number | null;
  /** This attempt's number: 1 for the first. */
  attempts: number;
}

/**
 * Claims the next due delivery, webhooks and commit statuses alike, of a project not in `busy`:
 * the projects whose deliveries already hold their share of this worker's slots wait, and the
 * others' deliveries go first (docs/design/deliveries.md).
 */
export async function claimDelivery(db: PrismaClient, workerId: string, leaseSeconds: number, busy: Iterable<number> = []): Promise<ClaimedDelivery | null> {
  const excluded = [...busy].join(',');
  const rows = await db.$queryRaw<ClaimedDelivery[]>`
    UPDATE "NotificationDelivery" SET
      "state" = 'running', "workerId" = ${workerId},
      "leaseExpiresAt" = now() + make_interval(secs => ${leaseSeconds}::double precision),
      "attempts" = "attempts" + 1
    WHERE "id" = (
      SELECT d."id" FROM "NotificationDelivery" d
      LEFT JOIN "Build" b ON b."id" = d."buildId"
      WHERE d."state" = 'queued' AND d."runAt" <= now()
        AND NOT (COALESCE(b."projectId", 0) = ANY(string_to_array(${excluded}, ',')::int[]))
      ORDER BY d."runAt", d."id"
      LIMIT 1
      FOR UPDATE OF d SKIP LOCKED
    )
    RETURNING "id", "kind", "webhookId", "integrationId", "userId", "event", "buildId", "attempts",
      (SELECT b."projectId" FROM "Build" b WHERE b."id" = "NotificationDelivery"."buildId") AS "projectId"`;
  return rows[0] ?? null;
}

export interface Outcome {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** Records an attempt: delivered on a 2xx; else queued again after `delaySeconds` while attempts remain, else failed. */
export async function recordAttempt(
  db: PrismaClient,
  id: number,
  workerId: string,
  outcome: Outcome,
  delaySeconds: number,
  maxAttempts: number,
): Promise<string | null> {
  const ok = outcome.error === null && outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
  const rows = await db.$queryRaw<{ state: string }[]>`
    UPDATE "NotificationDelivery" SET
      "state" = CASE WHEN ${ok} THEN 'delivered'::"OutgoingState" WHEN "attempts" < ${maxAttempts} THEN 'queued'::"OutgoingState" ELSE 'failed'::"OutgoingState" END,
      "runAt" = CASE WHEN ${ok} THEN "runAt" ELSE now() + make_interval(secs => ${delaySeconds}::double precision) END,
      "statusCode" = ${outcome.statusCode}, "error" = ${outcome.error}, "durationMs" = ${outcome.durationMs},
      "lastAttemptAt" = now(), "workerId" = NULL, "leaseExpiresAt" = NULL
    WHERE "id" = ${id} AND "workerId" = ${workerId} AND "state" = 'running'
    RETURNING "state"::text AS "state"`;
  return rows[0]?.state ?? null;
}

/** Deliveries whose worker died mid-attempt: due again (the attempt counted), or failed when none remain. */
export async function reapExpiredDeliveries(db: PrismaClient, maxAttempts: number): Promise<number> {
  return db.$executeRaw`
    UPDATE "NotificationDelivery" SET
      "state" = CASE WHEN "attempts" < ${maxAttempts} THEN 'queued'::"OutgoingState" ELSE 'failed'::"OutgoingState" END,
      "error" = 'The worker sending this notification stopped before it ended (its lease expired).',
      "runAt" = now(), "workerId" = NULL, "leaseExpiresAt" = NULL
    WHERE "state" = 'running' AND "leaseExpiresAt" < now()`;
}

/** Gives a running delivery back, due now, its attempt not counted (graceful shutdown). */
export async function releaseDelivery(db: PrismaClient, id: number, workerId: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "NotificationDelivery" SET "state" = 'queued', "attempts" = GREATEST("attempts" - 1, 0), "runAt" = now(),
      "workerId" = NULL, "leaseExpiresAt" = NULL
    WHERE "id" = ${id} AND "workerId" = ${workerId} AND "state" = 'running'`;
}

/**
 * Milliseconds until the next waiting delivery of a project not in `busy` is due (0 when one is due
 * now); null when none waits. A busy project's deliveries wake the worker as one of its own ends.
 */
export async function nextDeliveryDueMs(db: PrismaClient, busy: number[] = []): Promise<number | null> {
  if (!busy.length) return nextDueMs(db, 'NotificationDelivery');
  const rows = await db.$queryRaw<{ ms: number | null }[]>`
    SELECT (EXTRACT(EPOCH FROM (min(d."runAt") - now()::timestamp(3))) * 1000)::float8 AS "ms"
    FROM "NotificationDelivery" d LEFT JOIN "Build" b ON b."id" = d."buildId"
    WHERE d."state" = 'queued' AND NOT (COALESCE(b."projectId", 0) = ANY(string_to_array(${busy.join(',')}, ',')::int[]))`;
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? null : Math.max(0, ms);
}
