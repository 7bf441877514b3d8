-- CreateTable
CREATE TABLE "ApiThrottle" (
    "key" VARCHAR(255) NOT NULL,
    "times" TIMESTAMPTZ(3)[],
    "admitted" BOOLEAN NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ApiThrottle_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "ApiThrottle_expiresAt_idx" ON "ApiThrottle"("expiresAt");
