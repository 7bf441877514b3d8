-- AlterTable
ALTER TABLE "SearchSection" ADD COLUMN     "role" TEXT NOT NULL DEFAULT '';
