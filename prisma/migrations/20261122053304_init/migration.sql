-- CreateEnum
CREATE TYPE "VersionType" AS ENUM ('branch', 'tag', 'external', 'unknown');

-- CreateEnum
CREATE TYPE "PrivacyLevel" AS ENUM ('public', 'private');

-- CreateEnum
CREATE TYPE "BuildState" AS ENUM ('triggered', 'cloning', 'installing', 'building', 'finished');

-- CreateEnum
CREATE TYPE "RedirectType" AS ENUM ('prefix', 'page', 'exact', 'sphinx_html', 'sphinx_htmldir');

-- CreateEnum
CREATE TYPE "IntegrationProvider" AS ENUM ('github', 'gitlab', 'bitbucket', 'generic');

-- CreateTable
CREATE TABLE "User" (
    "id" SERIAL NOT NULL,
    "username" VARCHAR(150) NOT NULL,
    "email" VARCHAR(254),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApiToken" (
    "id" SERIAL NOT NULL,
    "userId" INTEGER NOT NULL,
    "keyHash" CHAR(64) NOT NULL,
    "keyPrefix" VARCHAR(8) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMP(3),

    CONSTRAINT "ApiToken_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Project" (
    "id" SERIAL NOT NULL,
    "name" VARCHAR(63) NOT NULL,
    "slug" VARCHAR(63) NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "language" VARCHAR(20) NOT NULL DEFAULT 'en',
    "programmingLanguage" VARCHAR(20) NOT NULL DEFAULT 'words',
    "repositoryUrl" VARCHAR(255) NOT NULL,
    "repositoryType" VARCHAR(10) NOT NULL DEFAULT 'git',
    "homepage" VARCHAR(255),
    "defaultVersion" VARCHAR(255) NOT NULL DEFAULT 'latest',
    "defaultBranch" VARCHAR(255),
    "privacyLevel" "PrivacyLevel" NOT NULL DEFAULT 'public',
    "externalBuildsPrivacyLevel" "PrivacyLevel" NOT NULL DEFAULT 'public',
    "analyticsCode" VARCHAR(50),
    "analyticsDisabled" BOOLEAN NOT NULL DEFAULT false,
    "singleVersion" BOOLEAN NOT NULL DEFAULT false,
    "showVersionWarning" BOOLEAN NOT NULL DEFAULT false,
    "versioningScheme" VARCHAR(60) NOT NULL DEFAULT 'multiple_versions_with_translations',
    "readthedocsYamlPath" VARCHAR(1024),
    "tags" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "mainLanguageProjectId" INTEGER,
    "maxConcurrentBuilds" INTEGER,
    "buildTimeLimit" INTEGER,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modifiedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Project_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Version" (
    "id" SERIAL NOT NULL,
    "projectId" INTEGER NOT NULL,
    "slug" VARCHAR(255) NOT NULL,
    "verboseName" VARCHAR(255) NOT NULL,
    "identifier" VARCHAR(255),
    "type" "VersionType" NOT NULL DEFAULT 'unknown',
    "active" BOOLEAN NOT NULL DEFAULT false,
    "hidden" BOOLEAN NOT NULL DEFAULT false,
    "built" BOOLEAN NOT NULL DEFAULT false,
    "privacyLevel" "PrivacyLevel" NOT NULL DEFAULT 'public',
    "machine" BOOLEAN NOT NULL DEFAULT false,
    "hasPdf" BOOLEAN NOT NULL DEFAULT false,
    "hasEpub" BOOLEAN NOT NULL DEFAULT false,
    "hasHtmlzip" BOOLEAN NOT NULL DEFAULT false,
    "documentationType" VARCHAR(30) NOT NULL DEFAULT 'sphinx',
    "lastBuildId" INTEGER,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modifiedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Version_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Build" (
    "id" SERIAL NOT NULL,
    "projectId" INTEGER NOT NULL,
    "versionId" INTEGER,
    "versionSlug" VARCHAR(255),
    "type" VARCHAR(10) NOT NULL DEFAULT 'html',
    "state" "BuildState" NOT NULL DEFAULT 'triggered',
    "success" BOOLEAN,
    "error" TEXT,
    "commit" VARCHAR(255),
    "config" JSONB,
    "readthedocsYamlPath" VARCHAR(1024),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMP(3),
    "finishedAt" TIMESTAMP(3),
    "length" INTEGER,
    "workerId" VARCHAR(255),
    "leaseExpiresAt" TIMESTAMP(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "Build_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "BuildCommand" (
    "id" SERIAL NOT NULL,
    "buildId" INTEGER NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "command" TEXT NOT NULL,
    "output" TEXT NOT NULL DEFAULT '',
    "exitCode" INTEGER,
    "startTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "endTime" TIMESTAMP(3),

    CONSTRAINT "BuildCommand_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ProjectRelationship" (
    "id" SERIAL NOT NULL,
    "parentId" INTEGER NOT NULL,
    "childId" INTEGER NOT NULL,
    "alias" VARCHAR(255) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ProjectRelationship_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Redirect" (
    "id" SERIAL NOT NULL,
    "projectId" INTEGER NOT NULL,
    "type" "RedirectType" NOT NULL,
    "fromUrl" VARCHAR(2048) NOT NULL DEFAULT '',
    "toUrl" VARCHAR(2048) NOT NULL DEFAULT '',
    "httpStatus" INTEGER NOT NULL DEFAULT 302,
    "position" INTEGER NOT NULL DEFAULT 0,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "force" BOOLEAN NOT NULL DEFAULT false,
    "description" VARCHAR(255) NOT NULL DEFAULT '',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modifiedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Redirect_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "EnvironmentVariable" (
    "id" SERIAL NOT NULL,
    "projectId" INTEGER NOT NULL,
    "name" VARCHAR(128) NOT NULL,
    "valueEncrypted" TEXT NOT NULL,
    "valueSize" INTEGER NOT NULL,
    "public" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modifiedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "EnvironmentVariable_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Integration" (
    "id" SERIAL NOT NULL,
    "projectId" INTEGER NOT NULL,
    "provider" "IntegrationProvider" NOT NULL,
    "secretEncrypted" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modifiedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Integration_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "_ProjectMaintainers" (
    "A" INTEGER NOT NULL,
    "B" INTEGER NOT NULL,

    CONSTRAINT "_ProjectMaintainers_AB_pkey" PRIMARY KEY ("A","B")
);

-- CreateIndex
CREATE UNIQUE INDEX "User_username_key" ON "User"("username");

-- CreateIndex
CREATE UNIQUE INDEX "ApiToken_keyHash_key" ON "ApiToken"("keyHash");

-- CreateIndex
CREATE INDEX "ApiToken_userId_idx" ON "ApiToken"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "Project_slug_key" ON "Project"("slug");

-- CreateIndex
CREATE INDEX "Project_language_idx" ON "Project"("language");

-- CreateIndex
CREATE INDEX "Project_programmingLanguage_idx" ON "Project"("programmingLanguage");

-- CreateIndex
CREATE INDEX "Project_mainLanguageProjectId_idx" ON "Project"("mainLanguageProjectId");

-- CreateIndex
CREATE UNIQUE INDEX "Version_lastBuildId_key" ON "Version"("lastBuildId");

-- CreateIndex
CREATE INDEX "Version_projectId_active_idx" ON "Version"("projectId", "active");

-- CreateIndex
CREATE INDEX "Version_projectId_built_idx" ON "Version"("projectId", "built");

-- CreateIndex
CREATE UNIQUE INDEX "Version_projectId_slug_key" ON "Version"("projectId", "slug");

-- CreateIndex
CREATE INDEX "Build_projectId_createdAt_idx" ON "Build"("projectId", "createdAt" DESC);

-- CreateIndex
CREATE INDEX "Build_versionId_createdAt_idx" ON "Build"("versionId", "createdAt" DESC);

-- CreateIndex
CREATE INDEX "Build_projectId_commit_idx" ON "Build"("projectId", "commit");

-- CreateIndex
CREATE INDEX "Build_state_createdAt_idx" ON "Build"("state", "createdAt");

-- CreateIndex
CREATE INDEX "BuildCommand_buildId_id_idx" ON "BuildCommand"("buildId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "ProjectRelationship_childId_key" ON "ProjectRelationship"("childId");

-- CreateIndex
CREATE UNIQUE INDEX "ProjectRelationship_parentId_alias_key" ON "ProjectRelationship"("parentId", "alias");

-- CreateIndex
CREATE INDEX "Redirect_projectId_position_idx" ON "Redirect"("projectId", "position");

-- CreateIndex
CREATE INDEX "EnvironmentVariable_projectId_idx" ON "EnvironmentVariable"("projectId");

-- CreateIndex
CREATE INDEX "Integration_projectId_idx" ON "Integration"("projectId");

-- CreateIndex
CREATE INDEX "_ProjectMaintainers_B_index" ON "_ProjectMaintainers"("B");

-- AddForeignKey
ALTER TABLE "ApiToken" ADD CONSTRAINT "ApiToken_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Project" ADD CONSTRAINT "Project_mainLanguageProjectId_fkey" FOREIGN KEY ("mainLanguageProjectId") REFERENCES "Project"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Version" ADD CONSTRAINT "Version_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Version" ADD CONSTRAINT "Version_lastBuildId_fkey" FOREIGN KEY ("lastBuildId") REFERENCES "Build"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Build" ADD CONSTRAINT "Build_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Build" ADD CONSTRAINT "Build_versionId_fkey" FOREIGN KEY ("versionId") REFERENCES "Version"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "BuildCommand" ADD CONSTRAINT "BuildCommand_buildId_fkey" FOREIGN KEY ("buildId") REFERENCES "Build"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ProjectRelationship" ADD CONSTRAINT "ProjectRelationship_parentId_fkey" FOREIGN KEY ("parentId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ProjectRelationship" ADD CONSTRAINT "ProjectRelationship_childId_fkey" FOREIGN KEY ("childId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Redirect" ADD CONSTRAINT "Redirect_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "EnvironmentVariable" ADD CONSTRAINT "EnvironmentVariable_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Integration" ADD CONSTRAINT "Integration_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "_ProjectMaintainers" ADD CONSTRAINT "_ProjectMaintainers_A_fkey" FOREIGN KEY ("A") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "_ProjectMaintainers" ADD CONSTRAINT "_ProjectMaintainers_B_fkey" FOREIGN KEY ("B") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
