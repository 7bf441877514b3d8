-- AlterTable
ALTER TABLE "Project" ADD COLUMN     "docsSearch" BOOLEAN NOT NULL DEFAULT true;
