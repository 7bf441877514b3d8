-- CreateTable
CREATE TABLE "SetupCode" (
    "id" SERIAL NOT NULL,
    "codeHash" CHAR(64) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SetupCode_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "SetupCode_codeHash_key" ON "SetupCode"("codeHash");
