-- CreateEnum
CREATE TYPE "OutgoingState" AS ENUM ('queued', 'running', 'delivered', 'failed');

-- CreateTable
CREATE TABLE "Webhook" (
    "id" SERIAL NOT NULL,
    "projectId" INTEGER NOT NULL,
    "url" VARCHAR(600) NOT NULL,
    "events" TEXT[],
    "payload" TEXT,
    "secretEncrypted" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modifiedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Webhook_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "NotificationDelivery" (
    "id" SERIAL NOT NULL,
    "webhookId" INTEGER NOT NULL,
    "event" VARCHAR(40) NOT NULL,
    "buildId" INTEGER NOT NULL,
    "state" "OutgoingState" NOT NULL DEFAULT 'queued',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "runAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "workerId" VARCHAR(255),
    "leaseExpiresAt" TIMESTAMP(3),
    "statusCode" INTEGER,
    "error" TEXT,
    "durationMs" INTEGER,
    "lastAttemptAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "NotificationDelivery_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Webhook_projectId_idx" ON "Webhook"("projectId");

-- CreateIndex
CREATE INDEX "NotificationDelivery_state_runAt_idx" ON "NotificationDelivery"("state", "runAt");

-- CreateIndex
CREATE INDEX "NotificationDelivery_webhookId_createdAt_idx" ON "NotificationDelivery"("webhookId", "createdAt" DESC);

-- AddForeignKey
ALTER TABLE "Webhook" ADD CONSTRAINT "Webhook_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "NotificationDelivery" ADD CONSTRAINT "NotificationDelivery_webhookId_fkey" FOREIGN KEY ("webhookId") REFERENCES "Webhook"("id") ON DELETE CASCADE ON UPDATE CASCADE;
