-- AlterTable
ALTER TABLE "Build" ADD COLUMN     "uploadArchiveBytes" BIGINT,
ADD COLUMN     "uploadBytes" BIGINT,
ADD COLUMN     "uploadFiles" INTEGER,
ADD COLUMN     "uploadedBy" VARCHAR(150);

-- AlterTable
ALTER TABLE "Project" ADD COLUMN     "uploadOnly" BOOLEAN NOT NULL DEFAULT false;
