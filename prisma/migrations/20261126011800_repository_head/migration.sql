-- AlterTable
ALTER TABLE "Project" ADD COLUMN     "repositoryHead" VARCHAR(255);
