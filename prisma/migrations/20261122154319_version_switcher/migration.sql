-- AlterTable
ALTER TABLE "Project" ADD COLUMN     "versionSwitcher" BOOLEAN NOT NULL DEFAULT true;
