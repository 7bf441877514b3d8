-- AlterTable
ALTER TABLE "Build" ADD COLUMN     "force" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "message" TEXT,
ADD COLUMN     "variablesStamp" TEXT;
