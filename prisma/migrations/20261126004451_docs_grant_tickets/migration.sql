-- CreateTable
CREATE TABLE "DocsGrantTicket" (
    "id" SERIAL NOT NULL,
    "codeHash" CHAR(64) NOT NULL,
    "sessionId" INTEGER NOT NULL,
    "host" VARCHAR(300) NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "DocsGrantTicket_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "DocsGrantTicket_codeHash_key" ON "DocsGrantTicket"("codeHash");

-- CreateIndex
CREATE INDEX "DocsGrantTicket_expiresAt_idx" ON "DocsGrantTicket"("expiresAt");
