-- AlterTable
ALTER TABLE "ApiToken" ADD COLUMN     "name" VARCHAR(100) NOT NULL DEFAULT '';

-- AlterTable
ALTER TABLE "User" ADD COLUMN     "disabledAt" TIMESTAMP(3),
ADD COLUMN     "isAdmin" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "passwordHash" VARCHAR(200);
