-- AlterTable
ALTER TABLE "Project" ADD COLUMN     "addonsEnabled" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "docDiffEnabled" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "hotkeysEnabled" BOOLEAN NOT NULL DEFAULT true;
