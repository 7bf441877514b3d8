-- AlterTable
ALTER TABLE "ApiToken" ADD COLUMN     "revokedAt" TIMESTAMP(3);

-- CreateTable
CREATE TABLE "AuditEntry" (
    "id" SERIAL NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "action" VARCHAR(40) NOT NULL,
    "userId" INTEGER,
    "username" VARCHAR(150) NOT NULL DEFAULT '',
    "organizationId" INTEGER,
    "organizationSlug" VARCHAR(255) NOT NULL DEFAULT '',
    "projectId" INTEGER,
    "projectSlug" VARCHAR(63) NOT NULL DEFAULT '',
    "method" VARCHAR(20) NOT NULL DEFAULT '',
    "ip" VARCHAR(64) NOT NULL DEFAULT '',
    "userAgent" VARCHAR(255) NOT NULL DEFAULT '',
    "data" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "AuditEntry_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "AuditEntry_createdAt_idx" ON "AuditEntry"("createdAt");

-- CreateIndex
CREATE INDEX "AuditEntry_organizationId_createdAt_idx" ON "AuditEntry"("organizationId", "createdAt");

-- CreateIndex
CREATE INDEX "AuditEntry_projectId_createdAt_idx" ON "AuditEntry"("projectId", "createdAt");

-- CreateIndex
CREATE INDEX "AuditEntry_userId_createdAt_idx" ON "AuditEntry"("userId", "createdAt");
