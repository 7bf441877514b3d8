-- AlterTable
ALTER TABLE "Project" ADD COLUMN     "buildMemoryLimit" BIGINT,
ADD COLUMN     "buildProcessesLimit" INTEGER;
