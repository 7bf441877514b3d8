-- CreateTable
CREATE TABLE "SearchSection" (
    "id" SERIAL NOT NULL,
    "projectId" INTEGER NOT NULL,
    "versionId" INTEGER NOT NULL,
    "buildId" INTEGER NOT NULL,
    "path" TEXT NOT NULL,
    "pageTitle" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "anchor" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "config" TEXT NOT NULL,
    "document" tsvector NOT NULL,

    CONSTRAINT "SearchSection_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "SearchSection_versionId_idx" ON "SearchSection"("versionId");

-- CreateIndex
CREATE INDEX "SearchSection_document_idx" ON "SearchSection" USING GIN ("document");

-- AddForeignKey
ALTER TABLE "SearchSection" ADD CONSTRAINT "SearchSection_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SearchSection" ADD CONSTRAINT "SearchSection_versionId_fkey" FOREIGN KEY ("versionId") REFERENCES "Version"("id") ON DELETE CASCADE ON UPDATE CASCADE;
