-- CreateTable
CREATE TABLE "AutomationRule" (
    "id" SERIAL NOT NULL,
    "projectId" INTEGER NOT NULL,
    "priority" INTEGER NOT NULL DEFAULT 0,
    "description" VARCHAR(255) NOT NULL DEFAULT '',
    "predefinedMatchArg" VARCHAR(32) NOT NULL,
    "matchArg" VARCHAR(255) NOT NULL DEFAULT '',
    "versionType" "VersionType" NOT NULL,
    "action" VARCHAR(32) NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modifiedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AutomationRule_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AutomationRuleMatch" (
    "id" SERIAL NOT NULL,
    "ruleId" INTEGER NOT NULL,
    "versionName" VARCHAR(255) NOT NULL,
    "versionType" "VersionType" NOT NULL,
    "matchArg" VARCHAR(255) NOT NULL,
    "action" VARCHAR(32) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AutomationRuleMatch_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "AutomationRule_projectId_priority_idx" ON "AutomationRule"("projectId", "priority");

-- CreateIndex
CREATE INDEX "AutomationRuleMatch_ruleId_createdAt_idx" ON "AutomationRuleMatch"("ruleId", "createdAt");

-- AddForeignKey
ALTER TABLE "AutomationRule" ADD CONSTRAINT "AutomationRule_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AutomationRuleMatch" ADD CONSTRAINT "AutomationRuleMatch_ruleId_fkey" FOREIGN KEY ("ruleId") REFERENCES "AutomationRule"("id") ON DELETE CASCADE ON UPDATE CASCADE;
