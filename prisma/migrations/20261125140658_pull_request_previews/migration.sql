-- AlterTable
ALTER TABLE "Integration" ADD COLUMN     "apiUrl" VARCHAR(255),
ADD COLUMN     "tokenEncrypted" TEXT;

-- AlterTable
ALTER TABLE "NotificationDelivery" ADD COLUMN     "integrationId" INTEGER,
ADD COLUMN     "kind" VARCHAR(10) NOT NULL DEFAULT 'webhook',
ALTER COLUMN "webhookId" DROP NOT NULL;

-- AlterTable
ALTER TABLE "Project" ADD COLUMN     "externalBuildsEnabled" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "Version" ADD COLUMN     "externalClosedAt" TIMESTAMP(3),
ADD COLUMN     "externalSource" JSONB,
ADD COLUMN     "externalState" VARCHAR(10);

-- AddForeignKey
ALTER TABLE "NotificationDelivery" ADD CONSTRAINT "NotificationDelivery_integrationId_fkey" FOREIGN KEY ("integrationId") REFERENCES "Integration"("id") ON DELETE CASCADE ON UPDATE CASCADE;
