-- AlterTable
ALTER TABLE "Version" ADD COLUMN     "indexedBuildId" INTEGER;

-- Sections indexed before this column existed were one build's per version: that build is the indexed one.
UPDATE "Version" v SET "indexedBuildId" = s."buildId"
FROM (SELECT "versionId", max("buildId") AS "buildId" FROM "SearchSection" GROUP BY "versionId") s
WHERE s."versionId" = v."id";
