-- CreateEnum
CREATE TYPE "VersionSyncState" AS ENUM ('queued', 'running', 'done', 'failed');

-- CreateTable
CREATE TABLE "VersionSyncJob" (
    "id" SERIAL NOT NULL,
    "projectId" INTEGER NOT NULL,
    "state" "VersionSyncState" NOT NULL DEFAULT 'queued',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "runAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "again" BOOLEAN NOT NULL DEFAULT false,
    "lastError" TEXT,
    "workerId" VARCHAR(255),
    "leaseExpiresAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "VersionSyncJob_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "VersionSyncJob_projectId_key" ON "VersionSyncJob"("projectId");

-- CreateIndex
CREATE INDEX "VersionSyncJob_state_runAt_idx" ON "VersionSyncJob"("state", "runAt");

-- AddForeignKey
ALTER TABLE "VersionSyncJob" ADD CONSTRAINT "VersionSyncJob_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;
