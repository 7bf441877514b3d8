-- Builds become jobs of the one job queue (docs/design/jobs.md): task `build`, grouped by project
-- with the project's build limit. The Build row keeps the build's record; its lease and attempts
-- move to its job.

-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "groupLimit" INTEGER;

-- Every build not finished becomes its job: a waiting one queued, due when it was triggered; a
-- running one running, under its worker's lease, which the worker of the new version renews or
-- which runs out and is taken back as before.
INSERT INTO "Job" ("task", "payload", "groupKey", "groupLimit", "state", "runAt", "attempts", "workerId", "leaseExpiresAt", "createdAt", "updatedAt")
SELECT 'build', jsonb_build_object('buildId', b."id"), 'project:' || b."projectId", COALESCE(p."maxConcurrentBuilds", 4),
       CASE WHEN b."state" = 'triggered' THEN 'queued'::"JobState" ELSE 'running'::"JobState" END,
       b."createdAt", b."attempts",
       CASE WHEN b."state" = 'triggered' THEN NULL ELSE b."workerId" END,
       CASE WHEN b."state" = 'triggered' THEN NULL ELSE COALESCE(b."leaseExpiresAt", CURRENT_TIMESTAMP) END,
       b."createdAt", CURRENT_TIMESTAMP
FROM "Build" b JOIN "Project" p ON p."id" = b."projectId"
WHERE b."state" <> 'finished'
ORDER BY b."createdAt", b."id";

-- DropIndex
DROP INDEX "Build_state_leaseExpiresAt_idx";

-- AlterTable
ALTER TABLE "Build" DROP COLUMN "attempts",
DROP COLUMN "leaseExpiresAt";
