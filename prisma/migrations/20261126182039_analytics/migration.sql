-- CreateTable
CREATE TABLE "PageViewDaily" (
    "projectId" INTEGER NOT NULL,
    "versionSlug" VARCHAR(255) NOT NULL,
    "path" VARCHAR(1024) NOT NULL,
    "day" DATE NOT NULL,
    "status" INTEGER NOT NULL,
    "views" INTEGER NOT NULL,

    CONSTRAINT "PageViewDaily_pkey" PRIMARY KEY ("projectId","versionSlug","path","day","status")
);

-- CreateTable
CREATE TABLE "SearchQueryDaily" (
    "projectId" INTEGER NOT NULL,
    "versionSlug" VARCHAR(255) NOT NULL,
    "query" VARCHAR(200) NOT NULL,
    "day" DATE NOT NULL,
    "searches" INTEGER NOT NULL,
    "results" INTEGER NOT NULL,

    CONSTRAINT "SearchQueryDaily_pkey" PRIMARY KEY ("projectId","versionSlug","query","day")
);

-- CreateIndex
CREATE INDEX "PageViewDaily_projectId_day_idx" ON "PageViewDaily"("projectId", "day");

-- CreateIndex
CREATE INDEX "SearchQueryDaily_projectId_day_idx" ON "SearchQueryDaily"("projectId", "day");

-- AddForeignKey
ALTER TABLE "PageViewDaily" ADD CONSTRAINT "PageViewDaily_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SearchQueryDaily" ADD CONSTRAINT "SearchQueryDaily_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;
