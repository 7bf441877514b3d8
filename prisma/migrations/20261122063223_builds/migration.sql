-- AlterTable
ALTER TABLE "Version" ADD COLUMN     "publishedBuildId" INTEGER;

-- CreateIndex
CREATE INDEX "Build_state_leaseExpiresAt_idx" ON "Build"("state", "leaseExpiresAt");
