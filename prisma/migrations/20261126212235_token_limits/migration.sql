-- AlterTable
ALTER TABLE "ApiToken" ADD COLUMN     "expiresAt" TIMESTAMP(3),
ADD COLUMN     "projectScoped" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "readOnly" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "ApiTokenProject" (
    "tokenId" INTEGER NOT NULL,
    "projectId" INTEGER NOT NULL,

    CONSTRAINT "ApiTokenProject_pkey" PRIMARY KEY ("tokenId","projectId")
);

-- CreateIndex
CREATE INDEX "ApiTokenProject_projectId_idx" ON "ApiTokenProject"("projectId");

-- AddForeignKey
ALTER TABLE "ApiTokenProject" ADD CONSTRAINT "ApiTokenProject_tokenId_fkey" FOREIGN KEY ("tokenId") REFERENCES "ApiToken"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApiTokenProject" ADD CONSTRAINT "ApiTokenProject_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;
