-- One job table for every kind of background work (docs/design/jobs.md): the version syncs'
-- own table and the notification deliveries' queue columns move into it.

-- CreateEnum
CREATE TYPE "JobState" AS ENUM ('queued', 'running', 'done', 'failed');

-- CreateTable
CREATE TABLE "Job" (
    "id" SERIAL NOT NULL,
    "task" VARCHAR(40) NOT NULL,
    "key" VARCHAR(200),
    "payload" JSONB NOT NULL DEFAULT '{}',
    "groupKey" VARCHAR(100),
    "state" "JobState" NOT NULL DEFAULT 'queued',
    "runAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "again" BOOLEAN NOT NULL DEFAULT false,
    "lastError" TEXT,
    "workerId" VARCHAR(255),
    "leaseExpiresAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Job_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Job_key_key" ON "Job"("key");

-- CreateIndex
CREATE INDEX "Job_state_runAt_idx" ON "Job"("state", "runAt");

-- CreateIndex
CREATE INDEX "Job_groupKey_state_idx" ON "Job"("groupKey", "state");

-- Version syncs become jobs under their project's key.
INSERT INTO "Job" ("task", "key", "payload", "groupKey", "state", "runAt", "attempts", "again", "lastError", "workerId", "leaseExpiresAt", "createdAt", "updatedAt")
SELECT 'version-sync', 'version-sync:' || "projectId", jsonb_build_object('projectId', "projectId"), 'project:' || "projectId",
       "state"::text::"JobState", "runAt", "attempts", "again", "lastError", "workerId", "leaseExpiresAt", "createdAt", "updatedAt"
FROM "VersionSyncJob";

-- Deliveries not yet delivered nor failed become jobs, due when they were; a running one's attempt
-- was not recorded, so it is due now and that attempt is not counted.
INSERT INTO "Job" ("task", "payload", "groupKey", "state", "runAt", "attempts", "createdAt", "updatedAt")
SELECT 'deliver', jsonb_build_object('deliveryId', d."id"), 'project:' || COALESCE(b."projectId", 0), 'queued',
       CASE WHEN d."state" = 'running' THEN CURRENT_TIMESTAMP ELSE d."runAt" END,
       CASE WHEN d."state" = 'running' THEN GREATEST(d."attempts" - 1, 0) ELSE d."attempts" END,
       d."createdAt", CURRENT_TIMESTAMP
FROM "NotificationDelivery" d LEFT JOIN "Build" b ON b."id" = d."buildId"
WHERE d."state" IN ('queued', 'running')
ORDER BY d."id";
UPDATE "NotificationDelivery" SET "state" = 'queued', "attempts" = GREATEST("attempts" - 1, 0), "runAt" = CURRENT_TIMESTAMP WHERE "state" = 'running';

-- DropForeignKey
ALTER TABLE "VersionSyncJob" DROP CONSTRAINT "VersionSyncJob_projectId_fkey";

-- DropIndex
DROP INDEX "NotificationDelivery_state_runAt_idx";

-- AlterTable
ALTER TABLE "NotificationDelivery" DROP COLUMN "leaseExpiresAt",
DROP COLUMN "workerId";

-- DropTable
DROP TABLE "VersionSyncJob";

-- DropEnum
DROP TYPE "VersionSyncState";
